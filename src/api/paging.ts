// Lists that are async-iterable over every item across pages, or fetched one page at a time.
// Both list shapes of the spec are handled: `{items, totalCount}` and bare JSON arrays.

export interface Page<T> {
  items: T[];
  /** Present for `{items, totalCount}` lists; bare-array lists do not say. */
  totalCount: number | undefined;
  pageNumber: number;
  pageSize: number;
}

/** Fetches one page: the raw decoded body, either shape. */
export type PageFetcher = (pageNumber: number, pageSize: number, signal?: AbortSignal) => Promise<unknown>;

export interface ListOptions {
  /** Items per request (always sent: the service's default page size is not documented). */
  pageSize?: number;
  /** First page to read (1-based). */
  startPage?: number;
  /** Stop after this many items. */
  limit?: number;
  signal?: AbortSignal;
  /** Items the walk yields (the rest are read over, not counted): a list's own records left out. */
  keep?: (item: never) => boolean;
  /**
   * An item's identity. With it, an item met again on the page after the one that held it (the
   * list moved down under the walk: something was added before it) is yielded once, not twice.
   */
  identify?: (item: never) => string | undefined;
  /**
   * Asks for the pages ahead as soon as a page arrives, not once half of it is taken: for a
   * consumer that spends little on each item (a cold start's inventory), so that the service
   * builds the next page while this one is read.
   */
  eager?: boolean;
  /**
   * Told once per walk when a page came back shorter than asked and more followed it: the
   * service caps its pages below the size asked for (the walk still reads every item).
   */
  onShortPage?: (given: number, asked: number) => void;
}

export const DEFAULT_PAGE_SIZE = 100;

export class PagedList<T> implements AsyncIterable<T> {
  /**
   * After a walk: the list's totalCount as its first and its last page said it, when they differ.
   * A list that shrank under the walk may have moved items up past it, unread: read it again.
   */
  moved: { from: number; to: number } | undefined;
  /** During a walk: the totalCount the last page read said, when the list says one. */
  total: number | undefined;

  constructor(
    private readonly fetcher: PageFetcher,
    private readonly opts: ListOptions = {},
  ) {}

  /** One page, 1-based. */
  async page(pageNumber = this.opts.startPage ?? 1, pageSize = this.opts.pageSize ?? DEFAULT_PAGE_SIZE): Promise<Page<T>> {
    const body = await this.fetcher(pageNumber, pageSize, this.opts.signal);
    return toPage<T>(body, pageNumber, pageSize);
  }

  /** Every item of every page, in one array: for lists known to be small (a playbook's parts). */
  async all(): Promise<T[]> {
    const out: T[] = [];
    for await (const item of this) out.push(item);
    return out;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    const pageSize = this.opts.pageSize ?? DEFAULT_PAGE_SIZE;
    const limit = this.opts.limit ?? Infinity;
    let pageNumber = this.opts.startPage ?? 1;
    let seen = 0;
    let previousFirst: string | undefined;
    // Pages are windows onto a list that others may change while it is read. Only the previous
    // page's identities are kept (memory stays flat): an item moved down by an insertion lands on
    // the next page, no further, as long as fewer than a page were added between two reads.
    const identify = this.opts.identify as ((item: T) => string | undefined) | undefined;
    let previousIds = new Set<string>();
    // The last page's length when it was shorter than asked: a cap, if another page follows it.
    let short: number | undefined;
    let toldShort = false;
    let firstTotal: number | undefined;
    this.moved = undefined;
    // Pages are asked for ahead of their use, so that a long listing costs the service's time, not
    // the service's plus ours: once the consumer has taken half of this page, the next one, and a
    // second one too while pages come back full (the service honours the page size, so totalCount
    // says how many pages there are). Not sooner: a consumer that works on each item (a migration
    // downloads it) would have the service build pages it needs only later, in the way of the
    // first downloads (an `eager` list asks at once). A consumer that stops early leaves at most
    // those requests unread.
    const ahead: Promise<Page<T>>[] = [];
    let requested = pageNumber;
    const request = (n: number) => {
      const p = this.page(n, pageSize);
      // Seen when awaited; until then a failure must not count as unhandled.
      p.catch(() => undefined);
      ahead.push(p);
      requested = n;
    };
    request(pageNumber);
    for (;;) {
      const page = await (ahead.shift() as Promise<Page<T>>);
      // A service that ignores pageNumber answers every page alike: stop rather than loop.
      const first = page.items.length > 0 ? JSON.stringify(page.items[0]) : undefined;
      if (first !== undefined && first === previousFirst) return;
      previousFirst = first;
      if (short !== undefined && page.items.length > 0 && !toldShort) {
        this.opts.onShortPage?.(short, pageSize);
        toldShort = true;
      }
      short = page.items.length > 0 && page.items.length < pageSize ? page.items.length : undefined;
      const taken = Math.min(page.items.length, limit - seen);
      const more = taken === page.items.length && seen + taken < limit && nextPageNeeded(page, pageSize, seen + taken);
      const seenBefore = seen;
      const readAhead = () => {
        if (requested === pageNumber) request(pageNumber + 1);
        const full = page.items.length === pageSize && page.totalCount !== undefined;
        const lastPage = full ? Math.ceil((page.totalCount as number) / pageSize) : requested;
        while (ahead.length < PAGES_AHEAD && requested < lastPage && (requested - pageNumber) * pageSize < limit - seenBefore) request(requested + 1);
      };
      if (page.totalCount !== undefined) {
        this.total = page.totalCount;
        firstTotal ??= page.totalCount;
        if (page.totalCount !== firstTotal) this.moved = { from: firstTotal, to: page.totalCount };
      }
      const keep = this.opts.keep as ((item: T) => boolean) | undefined;
      const ids = new Set<string>();
      const half = !more ? -1 : this.opts.eager ? 0 : taken >> 1;
      for (let i = 0; i < taken; i++) {
        if (i === half) readAhead();
        seen++;
        const item = page.items[i] as T;
        const id = identify?.(item);
        if (id !== undefined) {
          ids.add(id);
          if (previousIds.has(id)) continue;
        }
        if (!keep || keep(item)) yield item;
      }
      previousIds = ids;
      if (!more) return;
      pageNumber++;
    }
  }
}

/**
 * One client's page sizes. The profile's `pageSize` (measured by `ferry doctor --probe
 * --write-profile`) is the most a page of this service holds: no list asks for more. A page
 * shorter than asked with more after it means the service caps lower than that (or, with nothing
 * recorded, lower than ferry asks): every item is still read, since walks follow totalCount, and
 * each run listing meanwhile says so once (its `PageTally`).
 */
export class PageWatch {
  /** The tallies open now: one per run (or check) listing through this client. */
  private readonly open = new Set<PageTally>();

  /** `host`: the service's, named in what a run says (a migration lists two). */
  constructor(
    readonly host: string,
    readonly recordedCap?: number,
  ) {}

  /** The page size a list asks for: what it wants, never more than the recorded cap. */
  size(wanted = DEFAULT_PAGE_SIZE): number {
    return this.recordedCap !== undefined ? Math.min(wanted, this.recordedCap) : wanted;
  }

  /** A list's options with the page size bounded and its short pages reported here. */
  listOptions(path: string, opts: ListOptions): ListOptions {
    return { ...opts, pageSize: this.size(opts.pageSize), onShortPage: (given, asked) => this.short(path, given, asked) };
  }

  /** Counts the capped pages met from now until the tally ends (a run's). */
  tally(): PageTally {
    const t = new PageTally(this.host, this.recordedCap, (done) => this.open.delete(done));
    this.open.add(t);
    return t;
  }

  private short(path: string, given: number, asked: number): void {
    for (const t of this.open) t.met(path, given, asked);
  }
}

/** The capped pages one run met: how many lists, and the smallest page among them. */
export class PageTally {
  private lists = 0;
  private smallest: { given: number; asked: number; path: string } | undefined;

  constructor(
    private readonly host: string,
    private readonly recordedCap: number | undefined,
    private readonly close: (t: PageTally) => void,
  ) {}

  met(path: string, given: number, asked: number): void {
    this.lists++;
    if (!this.smallest || given < this.smallest.given) this.smallest = { given, asked, path };
  }

  /** Ends the tally: what the run says, or undefined when it met no capped page. */
  end(): string | undefined {
    this.close(this);
    const s = this.smallest;
    if (!s) return undefined;
    const seen = `it gave ${s.given} items where a page of ${s.asked} was asked (GET ${s.path}; ${this.lists} list${this.lists === 1 ? '' : 's'} met it)`;
    const read = 'Every item was still read (by totalCount)';
    return this.recordedCap !== undefined
      ? `warning: the service at ${this.host} caps its pages lower than the profile records (pageSize ${this.recordedCap}): ${seen}. ${read}. Measure it again: ferry doctor --probe --write-profile`
      : `warning: the service at ${this.host} caps its pages: ${seen}. ${read}. ferry doctor --probe --write-profile records the cap as the profile's pageSize, and ferry then asks for no more`;
  }
}

/** Pages asked for ahead of the one being read, at most. */
const PAGES_AHEAD = 2;

/**
 * Whether a walk must ask for the page after `page`. A short page proves nothing (services cap
 * page sizes without saying so), so: `{items, totalCount}` lists are read until totalCount items
 * arrived or a page comes back empty; bare arrays until an empty page. A page longer than asked
 * for means the call does not page at all: asking for page 2 would repeat it.
 */
export function nextPageNeeded(page: Page<unknown>, pageSize: number, seenSoFar: number): boolean {
  if (page.items.length === 0 || page.items.length > pageSize) return false;
  if (page.totalCount !== undefined) return seenSoFar < page.totalCount;
  return true;
}

export function toPage<T>(body: unknown, pageNumber: number, pageSize: number): Page<T> {
  if (Array.isArray(body)) return { items: body as T[], totalCount: undefined, pageNumber, pageSize };
  if (body && typeof body === 'object' && 'items' in body) {
    const { items, totalCount } = body as { items: T[] | null; totalCount?: number };
    return { items: items ?? [], totalCount: typeof totalCount === 'number' ? totalCount : undefined, pageNumber, pageSize };
  }
  if (body === undefined) return { items: [], totalCount: 0, pageNumber, pageSize };
  throw new TypeError('a list call answered with neither a JSON array nor an {items, totalCount} object');
}
