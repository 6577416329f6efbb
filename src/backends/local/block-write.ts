// A large body written to a file descriptor a block at a time, each block's writev overlapping the
// reading of the next: a write per network chunk, awaited before the next read, made a pull of one
// 1.5 GiB file half the speed of a plain undici pipe (issue 63). At most two blocks are held.
// A source that can hand its bytes over as they arrive (PartialContent.drain) is written with
// synchronous writes from its own read buffer instead (writeDrained).
import { writeSync, writev as writevFd } from 'node:fs';

const WRITE_BLOCK = 1024 * 1024;
/**
 * The most one synchronous write hands the kernel. Linux sizes a file's new page-cache folios by
 * the write. On this VM (Linux 6.18 under a hypervisor, virtio_balloon loaded) a pull's writes of
 * up to 1 MiB spent 76-78 % of a slow round in the copy into those folios (perf:
 * copy_folio_from_iter_atomic, some 30 times slower than in a fast round) and took 3-6 s instead
 * of 1.2 s; most likely large free blocks handed back to the host (the VM is a PVM guest with
 * virtio free page reporting on, order 9) and faulted in again as they were touched (not
 * proven). 1.5 GiB written after a freed file took 0.61-1.12 s in writes of 1 MiB, 0.33 s in
 * writes of 64 KiB, 0.64-0.68 s in writes of 16 KiB (curl's size).
 */
const WRITE_PIECE = 64 * 1024;

const writevAsync = (fd: number, buffers: Buffer[]): Promise<number> =>
  new Promise((resolve, reject) => writevFd(fd, buffers, null, (err, n) => (err ? reject(err) : resolve(n))));

/**
 * The body written to `fd` in blocks of WRITE_BLOCK, each writev overlapping the reading of the
 * next; the bytes written. A cut-off (a limit under --cutoff-mode hard) stops it between chunks:
 * the partial file goes, the next run fetches it whole.
 */
export async function writeOverlapped(fd: number, body: AsyncIterable<Buffer>, cancel: AbortSignal | undefined): Promise<number> {
  let bytes = 0;
  let block: Buffer[] = [];
  let blockBytes = 0;
  let writing: Promise<void> | undefined;
  try {
    for await (const chunk of body) {
      cancel?.throwIfAborted();
      block.push(chunk);
      blockBytes += chunk.length;
      bytes += chunk.length;
      if (blockBytes < WRITE_BLOCK) continue;
      await writing;
      const next = writeAll(fd, block);
      // Seen at the next await; marked now, so that a failing disk is not an unhandled rejection meanwhile.
      next.catch(() => undefined);
      writing = next;
      block = [];
      blockBytes = 0;
    }
    await writing;
    writing = undefined;
    if (blockBytes > 0) await writeAll(fd, block);
    return bytes;
  } finally {
    // A failure while reading leaves no write running on a descriptor about to be closed.
    await writing?.catch(() => undefined);
  }
}

/**
 * The bytes `drain` hands over written to `fd` at once, each before the next read of the socket,
 * from the reader's own buffer; the bytes written. Measured on one 1.5 GiB pull: 0.6 s of system
 * time, where writes of blocks from the thread pool took 1.9-3.2 s, fresh blocks or reused ones
 * (the loop curl runs). The event loop waits on each write, as long as the page cache takes one
 * (about 0.3 ms a MiB here). A cut-off stops it between reads, as above.
 */
export async function writeDrained(fd: number, drain: (sink: (bytes: Buffer) => void) => Promise<void>, cancel: AbortSignal | undefined): Promise<number> {
  let bytes = 0;
  await drain((chunk) => {
    cancel?.throwIfAborted();
    for (let done = 0; done < chunk.length; ) done += writeSync(fd, chunk, done, Math.min(WRITE_PIECE, chunk.length - done));
    bytes += chunk.length;
  });
  return bytes;
}

/** Every byte of `buffers` at the descriptor's position, however many calls it takes. */
async function writeAll(fd: number, buffers: Buffer[]): Promise<void> {
  let rest = buffers;
  while (rest.length > 0) {
    let written = await writevAsync(fd, rest);
    const left: Buffer[] = [];
    for (const b of rest) {
      if (written >= b.length) {
        written -= b.length;
        continue;
      }
      left.push(written > 0 ? b.subarray(written) : b);
      written = 0;
    }
    rest = left;
  }
}
