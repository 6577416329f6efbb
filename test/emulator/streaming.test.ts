// Unit tests of the streaming content scanner: every result must be independent of how the
// input is cut into chunks.
import { describe, expect, it } from 'vitest';
import { EICAR, scanContent } from '../../src/emulator/service/content-scan.js';

async function* chunked(data: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
}

describe('scanContent', () => {
  const pdf = Buffer.from('%PDF-1.7 /Type /Pages /Type /Page x /Type/Page /Type /Pages /Type  /Page');

  it.each([1, 3, 5, 11, 1000])('counts page objects and finds EICAR across chunks of %i bytes', async (size) => {
    const scan = await scanContent(chunked(pdf, size));
    expect(scan).toEqual({ bytes: pdf.length, startsWithPdfHeader: true, containsEicar: false, pdfPageObjects: 3 });
    const infected = Buffer.concat([Buffer.alloc(1000, 'a'), Buffer.from(EICAR), Buffer.alloc(10, 'b')]);
    expect((await scanContent(chunked(infected, size))).containsEicar).toBe(true);
  });

  it('reports an empty stream', async () => {
    expect(await scanContent(chunked(Buffer.alloc(0), 10))).toEqual({ bytes: 0, startsWithPdfHeader: false, containsEicar: false, pdfPageObjects: 0 });
  });
});
