// A service that lists from a search index shows a new item in its lists and searches some time
// after the create returned, and not in the order items were made; a removed item stays listed a
// while. The spec promises nothing else, so the emulator can be such a service on demand
// (`--listing-lag`, docs/emulator.md). Each item draws its own delay in [0, lag] from a seeded hash
// of its id, so a run is reproducible and later items can show before earlier ones. Reading an
// item by its id is never late. With no lag (the default) no list query changes at all.
import type Database from 'better-sqlite3';

export class ListingLag {
  private maxMs = 0;
  /** The lag in force from each change on: an item keeps the lag of the moment it was made (or removed), so what is listed stays listed. */
  private readonly history: { fromMs: number; ms: number }[] = [];

  constructor(
    private readonly nowMs: () => number,
    private readonly seed = 1,
  ) {}

  /** The longest a new item takes to be listed now (changed on the fly by tests: a lag that grows). */
  get ms(): number {
    return this.maxMs;
  }

  set(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new Error(`a listing lag must be a duration of 0 or more, not ${ms}`);
    const now = this.nowMs();
    this.maxMs = ms;
    this.history.push({ fromMs: now, ms });
    this.prune(now);
  }

  /**
   * A span whose every item is listed (or gone from lists) by now answers as one with no lag, and
   * spans with the same lag are one: the history holds only what some item may still wait on,
   * where an emulator whose lag a test suite set before each test had grown by one entry a test.
   */
  private prune(now: number): void {
    const h = this.history;
    for (let i = 0; i + 1 < h.length; i++) {
      const span = h[i] as { fromMs: number; ms: number };
      // Made (or removed) before the next span began, so shown (or gone) by its start plus this lag.
      if ((h[i + 1] as { fromMs: number }).fromMs + span.ms < now) span.ms = 0;
    }
    const kept: { fromMs: number; ms: number }[] = [];
    for (const span of h) {
      const last = kept[kept.length - 1];
      if (last ? last.ms !== span.ms : span.ms !== 0) kept.push(span);
    }
    h.splice(0, h.length, ...kept);
  }

  /** The longest lag an item may still wait on: how long a removed item may still be listed. */
  get longestMs(): number {
    let longest = 0;
    for (const span of this.history) longest = Math.max(longest, span.ms);
    return longest;
  }

  /** How many spans of lag it keeps (for its tests). */
  get spans(): number {
    return this.history.length;
  }

  /** The lag in force at a moment. */
  private lagAt(atMs: number): number {
    for (let i = this.history.length - 1; i >= 0; i--) if ((this.history[i] as { fromMs: number }).fromMs <= atMs) return (this.history[i] as { ms: number }).ms;
    return 0;
  }

  /** This item's delay: its own share, fixed by its id, of the lag in force when it was made (or removed). */
  delayOf(id: string, salt: string, atMs: number): number {
    return share(`${this.seed}\u0000${salt}\u0000${id}`) * this.lagAt(atMs);
  }

  /** Whether an item created at `dateAdded` (ISO) shows in lists yet. */
  listed(id: string, dateAdded: string): boolean {
    const at = Date.parse(dateAdded);
    return at + this.delayOf(id, 'created', at) <= this.nowMs();
  }

  /** Whether an item removed at `removedAtMs` still shows in lists. */
  stillListed(id: string, removedAtMs: number): boolean {
    return removedAtMs + this.delayOf(id, 'removed', removedAtMs) > this.nowMs();
  }
}

const byDatabase = new WeakMap<Database.Database, ListingLag>();

/** Gives the database its lag: the SQL functions the list queries call while a lag is set. */
export function attachListingLag(db: Database.Database, lag: ListingLag): void {
  byDatabase.set(db, lag);
  db.function('listed_yet', { deterministic: false }, (id: unknown, date: unknown) => (lag.listed(String(id), String(date)) ? 1 : 0));
  db.function('still_listed', { deterministic: false }, (id: unknown, removedAt: unknown) => (lag.stillListed(String(id), Number(removedAt)) ? 1 : 0));
}

/** The lag of a database's service, when one is set (else undefined: items list at once). */
export function listingLagOf(db: Database.Database): ListingLag | undefined {
  const lag = byDatabase.get(db);
  return lag && lag.ms > 0 ? lag : undefined;
}

/** The WHERE condition that hides items not listed yet, or none while items list at once. */
export function listedCondition(db: Database.Database, idColumn: string, dateColumn: string): string[] {
  return listingLagOf(db) ? [`listed_yet(${idColumn}, ${dateColumn}) = 1`] : [];
}

/** FNV-1a over the text, as a fraction in [0, 1): cheap, and the same for the same id and seed. */
function share(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // One more mix so that ids differing only at their end spread over the whole range.
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return (h >>> 0) / 4294967296;
}
