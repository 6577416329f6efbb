// What a job reads from: a tree of entries with stable relative keys. The mirror engine knows
// nothing else of where the bytes come from (a folder, a zip, later perhaps a bucket).
import type { Mark } from '../marks.js';
import type { Slot } from '../slots.js';
import type { Readable } from 'node:stream';
import { FerryError } from '../errors.js';

/** The source cannot be used at all: nothing was done. */
export class SourceError extends FerryError {}

/**
 * The entry was listed but is gone when its content is asked for (deleted at the source since):
 * a skipped item with this reason, never retried, never the end of the job.
 */
export class SourceGoneError extends FerryError {
  override get mark(): Mark {
    return 'gone';
  }
}

/**
 * The entry's content changed while it was read (a file still being written): the engine reads it
 * once more, then skips it with the reason "changing", as rclone does; never the end of the job.
 */
export class SourceChangedError extends FerryError {}

/**
 * What a destination may carry over besides the bytes, when the source knows it (a document's
 * processing settings and metadata). Opaque to the engine; destinations that cannot hold it ignore it.
 */
export interface EntryAttributes {
  contentType?: string | undefined;
  metadata?: Record<string, string> | undefined;
  ocrEngine?: string | undefined;
  ocrStrategy?: string | undefined;
  coordinateExtractionStrategy?: string | undefined;
  /** The id of the document this entry is, when the source is a service (named on the copy). */
  origin?: string | undefined;
  /** The project that document is in. */
  originProject?: string | undefined;
}

/** Content from `from` on, as FileEntry.openFrom gives it. */
export interface PartialContent {
  body: Readable;
  /**
   * The same bytes handed to `sink` as they arrive, instead of read from `body` (one or the other):
   * each valid only during the call, for a destination that writes at once. Resolves at the end;
   * a sink that throws ends the transfer with its error.
   */
  drain?: (sink: (bytes: Buffer) => void) => Promise<void>;
  from: number;
  version?: string;
}

export interface FileEntry {
  kind: 'file';
  /** Path relative to the source root, `/`-separated, never starting with `/` or containing `..`. */
  key: string;
  size: number;
  mtimeMs: number;
  /** A fresh stream of the content; callers may open it more than once (retries). */
  open(): Readable;
  /**
   * The same once it is ready, without a stream in between (sources whose content arrives by
   * request); `slot`, the pool slot of the write asking, is given away while its request waits out a retry.
   */
  openAsync?: (slot?: Slot) => Promise<Readable>;
  /**
   * The content from byte `offset` on, for a destination that kept the first bytes of an earlier
   * attempt (a source that can be asked for part of its content). `from` is where the body given
   * starts: `offset`, or 0 when the whole content came instead; `version` names the content (an
   * ETag), when the source has such a name.
   */
  openFrom?: (offset: number, slot?: Slot) => Promise<PartialContent>;
  /** Absolute path when the content is a file on disk (lets uploads read it directly). */
  path?: string;
  /**
   * A change marker stronger than size and time, when the source has one (a document's id:
   * documents never change, a new one replaces them). Kept in the checkpoint's sha256 column,
   * which also holds the content's sha256 under --checksum.
   */
  marker?: string;
  attributes?: EntryAttributes;
  /**
   * The identity of what the entry's document must carry beside its content (a manifest row's
   * metadata and settings, src/manifest), when a row applies: another one than last time is a change.
   */
  attributesDigest?: string | undefined;
  /** sha256 of the content, hex, when already computed (--checksum, a content comparison). */
  sha256?: string | undefined;
  /**
   * sha256 the source says the content has (a document's ferry.sha256), not computed here: a
   * destination checks the bytes it receives against it (backends/content-check.ts).
   */
  expectedSha256?: string | undefined;
}

export interface DirEntry {
  kind: 'dir';
  key: string;
}

/** Something found that cannot be mirrored: reported as a failed or skipped item, never silently dropped. */
export interface ProblemEntry {
  kind: 'problem';
  key: string;
  /** `failed` for errors (unreadable), `skipped` for deliberate exclusions (symlinks). */
  outcome: 'failed' | 'skipped';
  reason: string;
}

export type SourceEntry = FileEntry | DirEntry | ProblemEntry;

export interface Source {
  /** For messages and the job key. */
  readonly description: string;
  /** Checks the source can be read at all (throws a clear error if not) before a run starts. */
  prepare(): Promise<void>;
  entries(signal?: AbortSignal): AsyncIterable<SourceEntry>;
  /** The same entries in batches of whatever is ready, when the source can (cheaper to consume). */
  batches?(signal?: AbortSignal): AsyncIterable<SourceEntry[]>;
  /**
   * Whether the run's patterns take this path (--include, --exclude, --filter-from). A path they
   * leave out is not listed, and must not be taken for one gone from the source.
   */
  takes?(key: string): boolean;
  /**
   * How many entries the source expects to give, once it knows (a listing's totalCount; undefined
   * before or never): the run sizes its sets of keys once instead of growing them by doubling.
   */
  readonly expectedCount?: number | undefined;
  /**
   * What a person should be told of how the source was read, once it has been (names an archive
   * did not say the code page of, a flag that does nothing here): said among the run's problems.
   */
  notes?(): string[];
  close(): Promise<void>;
}
