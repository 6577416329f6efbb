// The sha256 of a file as it is sent (multipart.ts, the bulk sender): on the sending thread, or on
// a worker thread where the process has cores to spare, so that hashing overlaps reading and
// sending. On one thread, hashing took 1.0 s of the 1.7-1.8 s of CPU a 1.5 GiB upload cost here
// (sha256 at 1.65 GB/s), which caps the sender near 0.9 GB/s, below a 10 Gb/s wire; with a thread
// of its own, the sending thread took 0.72-0.75 s and the hashing thread 0.96-0.97 s.
//
// The worker reads the sender's own buffers (SharedArrayBuffer), so that it hashes exactly the
// bytes sent, with no copy; a buffer is filled again only once the worker is done with it. The
// worker is written inline (eval) so that the same code runs compiled and under the tests' loader.
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** A digest being taken: `update` in order, then `digest` once. */
export interface ContentHash {
  /** `bytes` hashed after those before; `done` once its memory may be written again. */
  update(bytes: Buffer, done: () => void): void;
  /** The hex digest of everything updated, or why there is none. */
  digest(then: (result: string | Error) => void): void;
  /** Lets go of the work (an attempt that ended before its file did). */
  abandon(): void;
}

/**
 * The cores a process needs for a digest to be taken on a thread of its own: one to send, one to
 * hash, one for the rest. On two, beside an emulator on the same machine, the thread took the
 * receiver's core: 5 alternated rounds of a 1.5 GiB mirror ran at 0.77 of curl's speed with it and
 * 0.97 without (bench/NOTES.md, *Big files*).
 */
const HASH_THREAD_MIN_CORES = 3;

/** Whether a digest is best taken off this thread here: its buffers should then be shared ones. */
export function hashesElsewhere(): boolean {
  return !workerBroken && coresAvailable() >= HASH_THREAD_MIN_CORES;
}

/** A new digest: on a thread of its own (`elsewhere`, unless that thread has failed), else on this one. */
export function contentHash(elsewhere = hashesElsewhere()): ContentHash {
  return elsewhere && !workerBroken ? new WorkerHash() : new InlineHash();
}

/** A buffer the hashing thread can read: shared memory where it is another thread. */
export function hashableBuffer(size: number, shared: boolean): Buffer {
  return shared ? Buffer.from(new SharedArrayBuffer(size)) : Buffer.allocUnsafe(size);
}

class InlineHash implements ContentHash {
  private readonly hash = createHash('sha256');

  update(bytes: Buffer, done: () => void): void {
    this.hash.update(bytes);
    done();
  }

  digest(then: (result: string | Error) => void): void {
    then(this.hash.digest('hex'));
  }

  abandon(): void {}
}

let cores: number | undefined;
/** Read once: the cores this process may run on (its affinity, as taskset sets it). */
function coresAvailable(): number {
  return (cores ??= availableParallelism());
}

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const jobs = new Map();
parentPort.on('message', (m) => {
  if (m.bytes) {
    let hash = jobs.get(m.job);
    if (!hash) jobs.set(m.job, (hash = createHash('sha256')));
    hash.update(m.bytes);
    parentPort.postMessage({ job: m.job, seq: m.seq });
  } else if (m.end) {
    const hash = jobs.get(m.job) ?? createHash('sha256');
    jobs.delete(m.job);
    parentPort.postMessage({ job: m.job, digest: hash.digest('hex') });
  } else {
    jobs.delete(m.job);
  }
});
`;

type Reply = { job: number; seq?: number; digest?: string };

let worker: Worker | undefined;
/** Set once the worker has failed: every later digest is taken on this thread. */
let workerBroken = false;
const jobs = new Map<number, WorkerHash>();
let nextJob = 0;

/** The one hashing thread, started at the first use; it holds the process open only while a digest is under way. */
function hashingThread(): Worker {
  if (worker) return worker;
  const w = new Worker(WORKER_SOURCE, { eval: true });
  w.on('message', (reply: Reply) => jobs.get(reply.job)?.reply(reply));
  const lost = (err: Error) => {
    workerBroken = true;
    worker = undefined;
    for (const job of [...jobs.values()]) job.lost(err);
  };
  w.on('error', (err) => lost(new Error(`the hashing thread failed: ${err.message}`)));
  w.on('exit', (code) => lost(new Error(`the hashing thread ended (exit ${code})`)));
  w.unref();
  worker = w;
  return w;
}

function track(job: number, hash: WorkerHash | undefined): void {
  if (hash) jobs.set(job, hash);
  else jobs.delete(job);
  if (jobs.size > 0) worker?.ref();
  else worker?.unref();
}

class WorkerHash implements ContentHash {
  private readonly job = nextJob++;
  private seq = 0;
  /** Buffers the thread still reads, by sequence: each one's `done`. */
  private readonly reading = new Map<number, () => void>();
  private then: ((result: string | Error) => void) | undefined;
  private failure: Error | undefined;

  update(bytes: Buffer, done: () => void): void {
    if (this.failure) return done();
    const shared = bytes.buffer instanceof SharedArrayBuffer;
    // Memory the thread cannot see is copied into some it can (a caller's own buffer): correct, if dearer.
    const view = shared ? bytes : Buffer.from(new SharedArrayBuffer(bytes.length));
    if (!shared) bytes.copy(view);
    const seq = this.seq++;
    this.reading.set(seq, shared ? done : () => {});
    track(this.job, this);
    hashingThread().postMessage({ job: this.job, seq, bytes: new Uint8Array(view.buffer, view.byteOffset, view.length) });
    if (!shared) done();
  }

  digest(then: (result: string | Error) => void): void {
    if (this.failure) return then(this.failure);
    this.then = then;
    track(this.job, this);
    hashingThread().postMessage({ job: this.job, end: true });
  }

  abandon(): void {
    if (!jobs.has(this.job)) return;
    track(this.job, undefined);
    worker?.postMessage({ job: this.job, drop: true });
    this.release();
  }

  reply(reply: Reply): void {
    if (reply.seq !== undefined) {
      const done = this.reading.get(reply.seq);
      this.reading.delete(reply.seq);
      done?.();
      return;
    }
    track(this.job, undefined);
    const then = this.then;
    this.then = undefined;
    then?.(reply.digest as string);
  }

  /** The thread is gone: its buffers are free again, and there is no digest. */
  lost(err: Error): void {
    this.failure = err;
    track(this.job, undefined);
    this.release();
    const then = this.then;
    this.then = undefined;
    then?.(err);
  }

  private release(): void {
    const waiting = [...this.reading.values()];
    this.reading.clear();
    for (const done of waiting) done();
  }
}
