// sha256 of an entry's content, as the mirror fingerprints a file before uploading it and `ferry
// check` compares it. A small file on disk is read in one call: a stream costs an open, a read, a
// close and a dozen callbacks either way, which for a file of a few KiB is most of the time spent
// (a check of 100,000 files of 1 KiB spent more in stream machinery and its garbage than in
// hashing). Larger files and content that is not a file are streamed: memory stays flat.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { sha256Of } from '../sync/checksum.js';
import type { FileEntry } from '../sync/types.js';

/** Read whole at or under this size (bytes). */
export const READ_WHOLE_UNDER = 64 * 1024;

export async function fingerprintEntry(entry: FileEntry): Promise<string> {
  // Computed by the source as it read the bytes (a tar's one pass): not read again.
  if (entry.sha256) return entry.sha256;
  if (entry.path && entry.size <= READ_WHOLE_UNDER) {
    const whole = await readSmall(entry.path, entry.size);
    if (whole) return createHash('sha256').update(whole).digest('hex');
  }
  return sha256Of(entry.path ? createReadStream(entry.path) : (entry.open() as Readable));
}

/** The file's bytes when it still holds no more than `size` (it may have grown since it was listed); else undefined. */
async function readSmall(path: string, size: number): Promise<Buffer | undefined> {
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(size + 1);
    let filled = 0;
    for (;;) {
      const { bytesRead } = await file.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) return buffer.subarray(0, filled);
      filled += bytesRead;
      if (filled > size) return undefined;
    }
  } finally {
    await file.close();
  }
}
