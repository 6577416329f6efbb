// Bytes received checked against the sha256 their source says they have (a document's
// ferry.sha256): hashed as they are written, never read a second time. A mismatch is a named
// failure, and the wrong bytes never stand under the document's name. rclone checks a hash after
// every transfer where both sides have one; restic and kopia every blob they read.
import { createHash, type Hash } from 'node:crypto';
import { FerryError } from '../errors.js';
import { visible } from '../text.js';

/** The bytes received are not those the source says it holds. */
export class ContentMismatchError extends FerryError {
  constructor(
    readonly key: string,
    readonly expected: string,
    /** The sha256 of each attempt's bytes, in order. */
    readonly received: readonly string[],
  ) {
    const attempts = received.length === 1 ? `received ${received[0]}` : `received ${received.join(', then ')}`;
    super(`the content of ${visible(key)} did not match its sha256 ${received.length === 1 ? '' : `${received.length} times `}(the source says ${expected}; ${attempts}): nothing was written under its name`);
  }

  /** The same failure after one more attempt that did not match either. */
  again(next: ContentMismatchError): ContentMismatchError {
    return new ContentMismatchError(this.key, this.expected, [...this.received, ...next.received]);
  }
}

/** One attempt's running sha256, when the source says what it must be; a no-op otherwise. */
export class ContentCheck {
  private readonly hash: Hash | undefined;

  constructor(
    private readonly key: string,
    /** The sha256 the source says the content has, hex; undefined when it says none. */
    readonly expected: string | undefined,
  ) {
    this.hash = expected ? createHash('sha256') : undefined;
  }

  /** Whether there is anything to compare with. */
  get verifiable(): boolean {
    return this.hash !== undefined;
  }

  update(bytes: Buffer): void {
    this.hash?.update(bytes);
  }

  /** Throws ContentMismatchError when the bytes seen are not the ones expected. */
  verify(): void {
    if (!this.hash || !this.expected) return;
    const got = this.hash.digest('hex');
    if (got !== this.expected) throw new ContentMismatchError(this.key, this.expected, [got]);
  }
}

/**
 * `attempt` run once, and once more from the start when its bytes did not match (a fault on the
 * way, a cache, a partial stitched onto other bytes); a second mismatch fails with both hashes.
 * `fresh` says whether the attempt must start over (not continue from kept bytes).
 */
export async function verifiedTwice<T>(attempt: (fresh: boolean) => Promise<T>, onMismatch?: (err: ContentMismatchError) => void): Promise<T> {
  try {
    return await attempt(false);
  } catch (first) {
    if (!(first instanceof ContentMismatchError)) throw first;
    onMismatch?.(first);
    try {
      return await attempt(true);
    } catch (second) {
      throw second instanceof ContentMismatchError ? first.again(second) : second;
    }
  }
}

/** What a run's summary says of its checks: `verified` and `unverifiable` counts, the unverifiable named (up to a cap). */
export interface ContentCheckCounts {
  verified: number;
  unverifiable: number;
  unverifiableKeys: string[];
}

export interface CheckReport {
  contentCheck: ContentCheckCounts;
}

/** The counts of several transfers (a migration's projects) as one; undefined when none checked anything. */
export function addChecks(parts: readonly (ContentCheckCounts | undefined)[], listed = 1_000): ContentCheckCounts | undefined {
  const present = parts.filter((p): p is ContentCheckCounts => p !== undefined);
  if (!present.length) return undefined;
  return {
    verified: present.reduce((n, p) => n + p.verified, 0),
    unverifiable: present.reduce((n, p) => n + p.unverifiable, 0),
    unverifiableKeys: present.flatMap((p) => p.unverifiableKeys).slice(0, listed),
  };
}

/** The documents a run received, counted by whether their bytes could be checked. */
export class CheckCounts {
  private verified = 0;
  private unverifiable = 0;
  private readonly keys: string[] = [];

  constructor(private readonly listed: number) {}

  /** One entry received whole: checked when it said its sha256. */
  count(entry: { key: string; expectedSha256?: string | undefined }): void {
    if (entry.expectedSha256) {
      this.verified++;
      return;
    }
    this.unverifiable++;
    if (this.keys.length < this.listed) this.keys.push(entry.key);
  }

  report(): CheckReport | Record<string, never> {
    if (this.verified + this.unverifiable === 0) return {};
    return { contentCheck: { verified: this.verified, unverifiable: this.unverifiable, unverifiableKeys: this.keys } };
  }
}
