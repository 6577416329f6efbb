// The emulated assistant: a deterministic reply built only from the request, so tests
// can predict it (an echo of the question, one citation per referenced document).
import type { ListedDocument } from '../state/documents.js';

export const QUOTE_BYTES = 200;
const SUMMARY_CHARS = 160;
const SSE_CHUNKS = 4;

export function summarize(text: string | null): string {
  const flat = (text ?? '').replace(/\s+/g, ' ').trim();
  if (!flat) return '(no text)';
  return flat.length > SUMMARY_CHARS ? `${flat.slice(0, SUMMARY_CHARS)}…` : flat;
}

export function replyText(userText: string | null, documents: readonly ListedDocument[]): string {
  const lines = [`You asked: "${summarize(userText)}".`];
  if (documents.length > 0) {
    lines.push(`I consulted ${documents.length} document(s): ${documents.map((d, i) => `[${i + 1}] ${d.name}`).join('; ')}.`);
  } else {
    lines.push('No documents were referenced.');
  }
  return lines.join('\n');
}

/** The reply cut into a few word-aligned pieces, as a streamed answer arrives. */
export function replyChunks(text: string): string[] {
  const words = text.split(/(?<=\s)/);
  const size = Math.max(1, Math.ceil(words.length / SSE_CHUNKS));
  const chunks: string[] = [];
  for (let i = 0; i < words.length; i += size) chunks.push(words.slice(i, i + size).join(''));
  return chunks;
}

/** Server-sent events: `delta` pieces, then the whole `message`, then `done`. */
export function* serverSentEvents(text: string, message: unknown): Generator<string> {
  for (const piece of replyChunks(text)) yield `event: delta\ndata: ${JSON.stringify({ text: piece })}\n\n`;
  // No final message event at all under --stream-format no-final.
  if (message !== undefined) yield `event: message\ndata: ${JSON.stringify(message)}\n\n`;
  yield 'event: done\ndata: [DONE]\n\n';
}
