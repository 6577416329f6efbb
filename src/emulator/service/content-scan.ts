// One streaming pass over a stored file: size, PDF header, PDF page objects and the
// EICAR test signature, each found even when split across chunk boundaries.
export const EICAR = 'X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*';

export interface ContentScan {
  bytes: number;
  startsWithPdfHeader: boolean;
  containsEicar: boolean;
  /** Occurrences of `/Type /Page` not followed by `s` (page objects, not the page tree). */
  pdfPageObjects: number;
}

const PAGE_OBJECT = /\/Type\s{0,8}\/Page/g;
/** Longer than any match plus its look-ahead character. */
const CARRY = 64;

export async function scanContent(source: AsyncIterable<Buffer>): Promise<ContentScan> {
  let bytes = 0;
  let head = '';
  let carry = '';
  let containsEicar = false;
  let pdfPageObjects = 0;
  for await (const chunk of source) {
    bytes += chunk.length;
    if (head.length < 5) head += chunk.subarray(0, 5 - head.length).toString('latin1');
    const text = carry + chunk.toString('latin1');
    containsEicar ||= text.includes(EICAR);
    // Count a match in the pass where the character after it first becomes visible,
    // so a match split across chunks, or one whose look-ahead is in the next chunk, is counted once.
    pdfPageObjects += countPageObjects(text, (end) => end >= carry.length && end < text.length);
    carry = text.slice(-Math.max(CARRY, EICAR.length - 1));
  }
  // A match that ends the file has no character after it.
  pdfPageObjects += countPageObjects(carry, (end) => end === carry.length);
  return { bytes, startsWithPdfHeader: head === '%PDF-', containsEicar, pdfPageObjects };
}

function countPageObjects(text: string, owned: (end: number) => boolean): number {
  let count = 0;
  for (const match of text.matchAll(PAGE_OBJECT)) {
    const end = (match.index ?? 0) + match[0].length;
    if (owned(end) && text[end] !== 's') count++;
  }
  return count;
}
