// `ferry check`: a local folder or zip against what the project holds, with no checkpoint store at
// all (rclone check). The project is listed once into a temporary SQLite file, so memory stays flat
// whatever it holds; then the source is walked and each file is matched by its path:
//  - matching: same size, and the same sha256 where the document carries ferry's fingerprint (or,
//    with --checksum, where its content read back through its url hashes the same);
//  - changed: another size or another content (a file changed in place with the same size too);
//  - missing on the service; only on the service; unreadable locally (what a mirror would fail);
//  - twice on the service: an older document at a path with the content of the one just newer
//    (a file written twice, as two runs with two stores at once write it; an older version is not).
// What a mirror skips on purpose (a symbolic link) is counted as skipped, with its reason: no difference.
// Documents without a fingerprint match by size alone unless --checksum: they are counted apart.
import { openScratchDb } from '../src/store/scratch-db.js';
import type { FerryClient } from '../src/api/client.js';
import { openSource } from '../src/backends/index.js';
import { ProjectSource } from '../src/backends/project/source.js';
import type { EntryAttributes, FileEntry } from '../src/sync/types.js';
import type { PathPatterns } from '../src/sync/patterns.js';
import { visible } from '../src/text.js';
import { sha256Of } from '../src/sync/checksum.js';
import { decide } from '../src/sync/decide.js';
import { asListed } from '../src/sync/judge.js';
import { fingerprintEntry } from '../src/backends/fingerprint.js';
import { normaliseRemotePath } from './mirror.js';
import { Manifest, placeOf, unmatchedWarning } from '../src/manifest/index.js';

export interface CheckOptions extends PathPatterns {
  source: string;
  project: string;
  /** Folder path under the project root (`--to` of the mirror). */
  to?: string | undefined;
  /** Compare content by reading documents that carry no fingerprint back from the service. */
  checksum?: boolean | undefined;
  /** --one-way: only whether the service holds every file of the source; what only the service holds is counted, not a difference. */
  oneWay?: boolean | undefined;
  /** --download: read every document back and compare its bytes (rclone's check --download), each checked against the sha256 it carries. */
  download?: boolean | undefined;
  /** --archive-encoding and --max-entries, as the mirror reads the archive. */
  archiveEncoding?: string | undefined;
  maxEntries?: number | undefined;
  stripComponents?: number | undefined;
  signal?: AbortSignal | undefined;
  /** --manifest: each file's metadata and settings, compared with what its document carries. */
  manifest?: string | undefined;
  manifestDelimiter?: string | undefined;
  manifestEncoding?: string | undefined;
  manifestSheet?: string | undefined;
  /** Told of every difference as it is found (the report keeps the first MAX_KEPT). */
  onDifference?: ((d: CheckDifference) => void) | undefined;
}

/** Differences kept in the report; the rest are counted, and told to `onDifference` only. */
export const MAX_KEPT = 1_000;

/** Files read and hashed at once. */
const HASHED_AT_ONCE = 8;

export type DifferenceKind = 'changed' | 'missing on the service' | 'only on the service' | 'twice on the service' | 'unreadable locally' | 'metadata differs';

export interface CheckDifference {
  kind: DifferenceKind;
  /** The path under the source root (and under --to on the service), shown with its controls escaped. */
  path: string;
  detail: string;
  /** `metadata differs`: the key or setting, and its value on each side (null: absent). */
  key?: string;
  service?: string | null;
  manifest?: string | null;
}

export interface CheckReport {
  source: string;
  project: string;
  to: string;
  matching: number;
  /**
   * Of the matching files, those whose document the service's processing refused, by reason
   * (uploadFailedReason): the content is there, but it is not indexed.
   */
  refused: Record<string, number>;
  /** Of the matching files, those compared by size alone (the document carries no fingerprint). */
  matchingBySizeOnly: number;
  differenceCount: number;
  /**
   * Older documents at a path whose newest document is the one compared, with other content (an
   * earlier upload of a changed file, kept by the service): not a difference. With the same
   * content they are *twice on the service*.
   */
  olderVersions: number;
  /** --one-way: documents only on the service (a renamed or deleted file's, kept for good), counted and not compared. */
  onlyOnServiceLeftOut?: number;
  /** Entries a mirror skips on purpose (a symbolic link, a path twice in a zip): said, not differences. */
  skipped: number;
  /** The first MAX_KEPT of them, with the reason; then a warning about the service (key `(service)`: its pages are capped), if any. */
  problems: { key: string; reason: string }[];
  counts: Record<DifferenceKind, number>;
  /** The first MAX_KEPT differences, in the order found (copies as the listing finds them, the source's walk, then the service's leftovers). */
  differences: CheckDifference[];
  bytesHashed: number;
}

export async function check(opts: CheckOptions, client: FerryClient): Promise<CheckReport> {
  const to = normaliseRemotePath(opts.to);
  // The manifest first, whole: a bad row is exit 2 before any request.
  const manifest = opts.manifest ? await Manifest.load(opts.manifest, { delimiter: opts.manifestDelimiter, encoding: opts.manifestEncoding, sheet: opts.manifestSheet }) : undefined;
  try {
    return await checkWith(opts, client, to, manifest);
  } finally {
    await manifest?.close();
  }
}

async function checkWith(opts: CheckOptions, client: FerryClient, to: string, manifest: Manifest | undefined): Promise<CheckReport> {
  // The project first: a source opened is a source to close.
  await client.projects.get(opts.project);
  // The same patterns on both sides, as the mirror applied them: what it left out is not a difference.
  const patterns: PathPatterns = { include: opts.include, exclude: opts.exclude, rules: opts.rules };
  // Names are compared, not uploaded: control characters are names like any other here.
  const source = await openSource(opts.source, { ...patterns, carryControl: true, archiveEncoding: opts.archiveEncoding, ...(opts.maxEntries !== undefined ? { archiveLimits: { maxEntries: opts.maxEntries } } : {}), ...(opts.stripComponents !== undefined ? { stripComponents: opts.stripComponents } : {}) });
  const scratch = await openScratchDb('check');
  const { db } = scratch;
  const pages = client.transport.pages.tally();
  const report: CheckReport = {
    source: source.description,
    project: opts.project,
    to,
    matching: 0,
    matchingBySizeOnly: 0,
    refused: {},
    olderVersions: 0,
    differenceCount: 0,
    skipped: 0,
    problems: [],
    counts: { changed: 0, 'missing on the service': 0, 'only on the service': 0, 'twice on the service': 0, 'unreadable locally': 0, 'metadata differs': 0 },
    differences: [],
    bytesHashed: 0,
  };
  const differ = (kind: DifferenceKind, path: string, detail: string, fields: Pick<CheckDifference, 'key' | 'service' | 'manifest'> = {}) => {
    // One way, as rclone's check --one-way: what only the service holds is no difference.
    if (opts.oneWay && kind === 'only on the service') {
      report.onlyOnServiceLeftOut = (report.onlyOnServiceLeftOut ?? 0) + 1;
      return;
    }
    report.differenceCount++;
    report.counts[kind]++;
    const d = { kind, path: visible(path), detail, ...fields };
    if (report.differences.length < MAX_KEPT) report.differences.push(d);
    opts.onDifference?.(d);
  };
  /** The same content is there, but processing refused it: not simply matching, counted by reason. */
  const matched = (remote: { refused: string | null }) => {
    report.matching++;
    if (remote.refused) report.refused[remote.refused] = (report.refused[remote.refused] ?? 0) + 1;
  };
  /** What the file's row names that its document does not carry: a difference a key. */
  const compareAttributes = (entry: FileEntry, remote: { id: string; attrs: string | null }) => {
    const row = manifest?.lookup(entry.key);
    if (!row) return;
    const theirs = remote.attrs ? (JSON.parse(remote.attrs) as EntryAttributes) : {};
    const wanted: [string, string, string | null][] = [
      ...Object.entries(row.metadata).map(([k, v]): [string, string, string | null] => [k, v, theirs.metadata?.[k] ?? null]),
      ...Object.entries(row.settings).map(([k, v]): [string, string, string | null] => [k, v, (theirs as Record<string, string | undefined>)[k] ?? null]),
    ];
    for (const [key, mine, service] of wanted) {
      if (mine === service) continue;
      differ('metadata differs', entry.key, `${key}: ${service === null ? 'absent' : JSON.stringify(service)} on the service (document ${remote.id}), ${JSON.stringify(mine)} in the manifest (${placeOf(opts.manifest!, row.line)})`, { key, service, manifest: mine });
    }
  };
  /**
   * The sha256 of a document's bytes as the service sends them, checked as a pull checks them:
   * against the sha256 the document carries (`claimed`), or lacking one against the local file's
   * (`local`); a mismatch is read once more. Bytes that differ from one read to the next, or that
   * match not even the document's own sha256, are `unsteady`: said, never taken for its content.
   */
  const readBack = async (url: string, key: string, claimed: string | null, local: string): Promise<{ sha256: string; reads: number; unsteady?: string }> => {
    const once = async () => sha256Of((await client.documents.download({ url, name: key })).body);
    const first = await once();
    const wanted = claimed ?? local;
    if (first === wanted) return { sha256: first, reads: 1 };
    const second = await once();
    if (second === wanted || (!claimed && second === first)) return { sha256: second, reads: 2 };
    return {
      sha256: second,
      reads: 2,
      unsteady: claimed
        ? `the service sent bytes that do not match the sha256 the document carries, twice (it says ${claimed}; sent ${first}, then ${second})`
        : `the service sent other bytes each time it was read (sha256 ${first}, then ${second}): it could not be compared`,
    };
  };
  const compare = async (entry: FileEntry, remote: { id: string; size: number; sha256: string | null; url: string | null; refused: string | null; attrs: string | null } | undefined): Promise<() => void> => {
    if (!remote) {
      manifest?.lookup(entry.key);
      return () => differ('missing on the service', entry.key, `${entry.size} bytes here, no document at this path`);
    }
    const attributes = () => compareAttributes(entry, remote);
    // The judgement a mirror makes of a remembered item (judge.ts), of the listed document.
    const file = { size: entry.size, mtimeMs: entry.mtimeMs };
    if (decide(file, asListed(remote)) === 'changed') return () => differ('changed', entry.key, `${entry.size} bytes here, ${remote.size} on the service (document ${remote.id})`);
    const read = remote.url !== null && (opts.download === true || (opts.checksum === true && !remote.sha256));
    if (!remote.sha256 && !read) {
      return () => {
        matched(remote);
        report.matchingBySizeOnly++;
        attributes();
      };
    }
    let ours: string;
    try {
      ours = await fingerprintEntry(entry);
    } catch (err) {
      // Gone or unreadable since the walk found it: what a mirror would fail now.
      const code = (err as NodeJS.ErrnoException).code;
      return () => differ('unreadable locally', entry.key, `cannot be read: ${code ?? (err as Error).message}`);
    }
    let hashed = entry.size;
    let theirs = remote.sha256 as string;
    let unsteady: string | undefined;
    if (read) {
      const got = await readBack(remote.url as string, entry.key, remote.sha256, ours);
      hashed += got.reads * remote.size;
      theirs = got.sha256;
      unsteady = got.unsteady;
    }
    return () => {
      report.bytesHashed += hashed;
      if (unsteady) differ('changed', entry.key, `${unsteady} (document ${remote.id})`);
      else if (decide({ ...file, sha256: ours }, asListed({ ...remote, sha256: theirs })) === 'unchanged') {
        matched(remote);
        attributes();
      } else differ('changed', entry.key, `same size (${entry.size} bytes), other content: sha256 ${ours.slice(0, 12)}… here, ${theirs.slice(0, 12)}… on the service (document ${remote.id})`);
    };
  };
  try {
    db.exec('CREATE TABLE remote (key TEXT PRIMARY KEY, id TEXT NOT NULL, size INTEGER NOT NULL, sha256 TEXT, url TEXT, refused TEXT, attrs TEXT, seen INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID');
    const put = db.prepare('INSERT OR IGNORE INTO remote (key, id, size, sha256, url, refused, attrs) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const listing = new ProjectSource(client, opts.project, { from: to, ...patterns, carryControl: true });
    let batch: Parameters<typeof put.run>[] = [];
    const flush = db.transaction((rows: Parameters<typeof put.run>[]) => {
      for (const r of rows) put.run(...r);
    });
    // Newest first: the first document at a path is the one that counts (INSERT OR IGNORE).
    // What each document carries is kept only when a manifest is compared with it.
    for await (const doc of listing.inventory(opts.signal, undefined, manifest !== undefined, true)) {
      // A document no path can stand for: only on the service, with why it cannot be compared.
      if ('unpathed' in doc) {
        differ('only on the service', doc.key, doc.unpathed);
        continue;
      }
      // An earlier upload of a changed file (the service replaces nothing): no difference, but
      // counted, so that check and ls add up.
      if ('older' in doc) {
        report.olderVersions++;
        continue;
      }
      if ('copy' in doc) {
        differ('twice on the service', doc.key, `document ${doc.remoteId} holds the same content as the newer document at this path`);
        continue;
      }
      // The content's address is kept only where it may be read (--download; --checksum, no fingerprint): it
      // is the longest column, and the table is read once per file of the source.
      const sha256 = doc.identity?.sha256 ?? null;
      batch.push([doc.key, doc.remoteId, doc.size, sha256, opts.download || (opts.checksum && !sha256) ? doc.url : null, doc.refused, doc.attributes ? JSON.stringify({ metadata: doc.attributes.metadata, ocrStrategy: doc.attributes.ocrStrategy, ocrEngine: doc.attributes.ocrEngine, coordinateExtractionStrategy: doc.attributes.coordinateExtractionStrategy }) : null]);
      if (batch.length >= 500) {
        flush(batch);
        batch = [];
      }
    }
    flush(batch);

    const get = db.prepare<[string], { id: string; size: number; sha256: string | null; url: string | null; refused: string | null; attrs: string | null }>('SELECT id, size, sha256, url, refused, attrs FROM remote WHERE key = ?');
    // What is left unseen is only on the service. Marked a few hundred at a time: one UPDATE
    // committed on its own cost 95 µs a file, eight times the lookup.
    const mark = db.prepare('UPDATE remote SET seen = 1 WHERE key = ?');
    const markAll = db.transaction((keys: string[]) => {
      for (const key of keys) mark.run(key);
    });
    let seen: string[] = [];
    const take = (key: string) => {
      const remote = get.get(key);
      if (remote) seen.push(key);
      if (seen.length >= 500) {
        markAll(seen);
        seen = [];
      }
      return remote;
    };
    // Files are hashed a few at a time (reading one is mostly waiting), and their verdicts taken in
    // the order of the walk, so the report lists differences in the same order at any pace.
    const verdicts: Promise<() => void>[] = [];
    const nextVerdict = async () => (await verdicts.shift()!)();
    for await (const entry of source.entries(opts.signal)) {
      if (entry.kind === 'dir') continue;
      if (entry.kind === 'problem') {
        // What the mirror fails is a difference; what it skips on purpose is only said.
        verdicts.push(
          Promise.resolve(() => {
            if (entry.outcome === 'failed') differ('unreadable locally', entry.key, entry.reason);
            else {
              report.skipped++;
              if (report.problems.length < MAX_KEPT) report.problems.push({ key: entry.key, reason: entry.reason });
            }
          }),
        );
      } else {
        // A failure (a download under --checksum) ends the check when its turn comes, not before
        // the verdicts ahead of it are taken, and never as an unhandled rejection.
        verdicts.push(compare(entry, take(entry.key)).catch((err: unknown) => () => {
          throw err;
        }));
      }
      if (verdicts.length >= HASHED_AT_ONCE) await nextVerdict();
    }
    while (verdicts.length) await nextVerdict();
    markAll(seen);
    for (const row of db.prepare<[], { key: string; id: string; size: number }>('SELECT key, id, size FROM remote WHERE seen = 0 ORDER BY key').iterate()) {
      differ('only on the service', row.key, `document ${row.id}, ${row.size} bytes, not in the source`);
    }
    // A capped page is said here too, as a run says it: the check still read every document.
    const capped = pages.end();
    if (capped) report.problems.push({ key: '(service)', reason: capped });
    for (const reason of source.notes?.() ?? []) report.problems.push({ key: '(source)', reason });
    const unmatched = manifest?.unmatched(source.takes?.bind(source));
    if (unmatched?.count) report.problems.push({ key: '(manifest)', reason: unmatchedWarning(unmatched) });
    return report;
  } finally {
    pages.end(); // a second end is a no-op: this one is for a check that threw
    await scratch.close();
    await source.close();
  }
}

