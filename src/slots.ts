// The slot a pool's work item holds (src/runner/pool.ts), reachable from the code it calls without
// passing it down: a request that waits out a Retry-After or a backoff gives its slot to another
// item meanwhile (issue 21: refused requests sat in worker slots while they waited, and 12 %
// random faults cut throughput 70-fold). Ground floor: the transport and the item retries use it
// without knowing the pool; outside a pool it does nothing.
import { AsyncLocalStorage } from 'node:async_hooks';

export interface Slot {
  /** Runs `wait` with the slot given back, and takes a slot again (ahead of new items) after. */
  releaseWhile<T>(wait: () => Promise<T>): Promise<T>;
  /** Milliseconds this item spent waiting, released or not (kept out of its latency). */
  waitedMs: number;
  /** Waits for a retry so far: an item that needed one says nothing about the service's latency. */
  retries: number;
}

const current = new AsyncLocalStorage<Slot>();

/** Pools at work in this process: the storage is on only while there is one. */
let pools = 0;

export function runInSlot<T>(slot: Slot, fn: () => Promise<T>): Promise<T> {
  return current.run(slot, fn);
}

/**
 * Marks a pool at work; the function it returns marks it done. When the last pool is done the
 * storage is switched off (run() switches it on again): on Node 20 it rests on async hooks, which
 * once on make every promise of the process dearer, and a process that embeds ferry, or runs one
 * job after another, would pay that long after the writes (a cold start's listing: ~10 % more CPU).
 */
export function poolAtWork(): () => void {
  pools++;
  let done = false;
  return () => {
    if (done) return;
    done = true;
    if (--pools === 0) current.disable();
  };
}

/** How many pools are at work (for tests: with none, the storage is off). */
export function poolsAtWork(): number {
  return pools;
}

/** A wait that needs no slot: a retry's backoff or Retry-After. */
export async function waitOutsideSlot<T>(wait: () => Promise<T>): Promise<T> {
  const slot = current.getStore();
  if (!slot) return wait();
  const started = Date.now();
  slot.retries++;
  try {
    return await slot.releaseWhile(wait);
  } finally {
    slot.waitedMs += Date.now() - started;
  }
}

/**
 * Work that several items may await (a folder being made, a shared listing) runs outside any
 * item's slot: were its retry waits to hand back the slot of the item that happened to start it,
 * that item could not take one again while the items awaiting the work held them all.
 */
export function detached<T>(work: () => Promise<T>): Promise<T> {
  return current.exit(work);
}

/** A wait that keeps the slot (the pacer's spacing) but is no part of the item's latency. */
export function noteWaited(ms: number): void {
  const slot = current.getStore();
  if (slot) slot.waitedMs += ms;
}

/** What the current item has waited so far, and how many retries it waited for. */
export function waitedInSlot(): { ms: number; retries: number } {
  const slot = current.getStore();
  return { ms: slot?.waitedMs ?? 0, retries: slot?.retries ?? 0 };
}
