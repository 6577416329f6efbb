import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';

/** sha256 of a stream, hex, reading it through once. */
export async function sha256Of(stream: Readable): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
