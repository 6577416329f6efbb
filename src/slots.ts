// The slot a pool's work item holds (src/runner/pool.ts), handed down with the calls the item
// makes: a request that waits out a Retry-After or a backoff gives its slot to another item
// meanwhile (issue 21: refused requests sat in worker slots while they waited, and 12 % random
// faults cut throughput 70-fold). Ground floor: the transport and the item retries use it without
// knowing the pool; a call made without a slot (shared work: a folder being made, a listing
// several items await) waits where it is.
//
// Passed explicitly rather than through AsyncLocalStorage: on Node 20 that rests on async hooks,
// which made every promise of a transfer dearer (a migration of 2,000 documents: 71 us of the
// ~960 us of CPU each document cost ferry, profiled; 6-11 % less CPU without, two runs of three rounds).

export interface Slot {
  /** Runs `wait` with the slot given back, and takes a slot again (ahead of new items) after. */
  releaseWhile<T>(wait: () => Promise<T>): Promise<T>;
  /** Milliseconds this item spent waiting, released or not (kept out of its latency). */
  waitedMs: number;
  /** Waits for a retry so far: an item that needed one says nothing about the service's latency. */
  retries: number;
}

/** A wait that needs no slot: a retry's backoff or Retry-After. */
export async function waitOutsideSlot<T>(slot: Slot | undefined, wait: () => Promise<T>): Promise<T> {
  if (!slot) return wait();
  const started = Date.now();
  slot.retries++;
  try {
    return await slot.releaseWhile(wait);
  } finally {
    slot.waitedMs += Date.now() - started;
  }
}

/** A wait that keeps the slot (the pacer's spacing) but is no part of the item's latency. */
export function noteWaited(slot: Slot | undefined, ms: number): void {
  if (slot) slot.waitedMs += ms;
}
