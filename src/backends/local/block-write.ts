// A body written to a file descriptor with synchronous writes, on the thread that reads it, as
// curl's loop of read and write does: from a source that can hand its bytes over as they arrive
// (PartialContent.drain: the socket's own read buffer), or from a stream, chunk by chunk as it
// flows. Writes of blocks from Node's thread pool, fresh or reused, took 1.9-3.2 s of system time
// per 1.5 GiB here, the same bytes written at once 0.6 s; a write per chunk awaited before the
// next read made a pull half the speed of a plain undici pipe (issue 63).
import { writeSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';

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

/** `chunk` written at the descriptor's position now, in pieces of WRITE_PIECE. */
function writeNow(fd: number, chunk: Buffer): void {
  for (let done = 0; done < chunk.length; ) done += writeSync(fd, chunk, done, Math.min(WRITE_PIECE, chunk.length - done));
}

/**
 * The body written to `fd` chunk by chunk as it flows, each at once in pieces of WRITE_PIECE: no
 * chunks joined (a stream's read(), as `for await` calls it, joins what it holds into a new
 * buffer) and no trip to the thread pool. The bytes written. A cut-off (a limit under
 * --cutoff-mode hard) stops it between chunks: the partial file goes, the next run fetches it
 * whole. Measured by hand, 1.5 GiB pulled over https (the emulator with --tls-cert) from core 0,
 * 5 alternated rounds: 3.4-5.1 s, where blocks of 1 MiB written from the thread pool took
 * 5.7-7.0 s; curl -o 3.1-4.2 s.
 */
export async function writeFlowing(fd: number, body: Readable, cancel: AbortSignal | undefined, seen?: (chunk: Buffer) => void): Promise<number> {
  let bytes = 0;
  let failure: unknown;
  const onData = (chunk: Buffer) => {
    try {
      cancel?.throwIfAborted();
      writeNow(fd, chunk);
      seen?.(chunk);
      bytes += chunk.length;
    } catch (err) {
      failure = err;
      body.off('data', onData);
      body.destroy(err as Error);
    }
  };
  body.on('data', onData);
  try {
    await finished(body);
  } catch (err) {
    throw failure ?? err;
  }
  if (failure) throw failure;
  return bytes;
}

/**
 * The bytes `drain` hands over written to `fd` at once, each before the next read of the socket,
 * from the reader's own buffer; the bytes written. Measured on one 1.5 GiB pull: 0.6 s of system
 * time, where writes of blocks from the thread pool took 1.9-3.2 s, fresh blocks or reused ones
 * (the loop curl runs). The event loop waits on each write, as long as the page cache takes one
 * (about 0.3 ms a MiB here). A cut-off stops it between reads, as above.
 */
export async function writeDrained(fd: number, drain: (sink: (bytes: Buffer) => void) => Promise<void>, cancel: AbortSignal | undefined, seen?: (chunk: Buffer) => void): Promise<number> {
  let bytes = 0;
  await drain((chunk) => {
    cancel?.throwIfAborted();
    writeNow(fd, chunk);
    // Hashed while the reader's buffer is still this chunk's (it is valid only during the call).
    seen?.(chunk);
    bytes += chunk.length;
  });
  return bytes;
}
