// The one clock interface: elapsed local time and waiting on it, injected wherever a decision
// waits (the listing bound, src/api/listed.ts; the lease, src/runner/lease), so that tests drive
// time by hand. Its readings are never compared across machines.
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}
