// The flags and their parsing, light enough for `--help`: nothing here opens a client, a store or a
// socket (start-up loads a command's definition; its action, in ../actions, only when it runs).
import { parseBandwidthLimit, type BandwidthLimit } from '../sync/bandwidth.js';
import type { LimitSettings } from '../runner/limits.js';
import { Option, type Command } from 'commander';
import { accessSync, constants, statSync } from 'node:fs';
import { dirname as dirnamePath, resolve as resolvePath } from 'node:path';
import { isUuid } from '../ids.js';
import { projectFlag } from './project-name.js';
import { ConfigurationError } from '../errors.js';
import { DEFAULT_CONCURRENCY } from '../runner/adaptive.js';
import type { MirrorOptions } from '../../jobs/mirror.js';
import { visible } from '../backends/names.js';
import { delimiterFlag } from '../manifest/flags.js';
import { OWN_METADATA } from '../backends/project/identity.js';
import { isAge, parseDuration, parseSize } from '../runner/format.js';
import { DURATION_EXAMPLES, isDuration } from '../duration.js';
import { checkPatternFlags, type FilterRule } from '../sync/filter-rules.js';
import { readFilterFile } from '../config/filter-file.js';
import type { LeaseSettings } from '../backends/project/lease-use.js';
import { leaseEventsOnStderr } from './lease-words.js';
import { MAX_LEASE_TTL_MS, MIN_LEASE_TTL_MS } from '../runner/lease.js';

export const OCR_ENGINES = ['cloudDocumentIntelligence', 'engineA'];
export const OCR_STRATEGIES = ['never', 'detect', 'always'];
export const COORDINATE_STRATEGIES = ['never', 'engineB', 'cloudDocumentIntelligence', 'spreadsheet'];

export interface MirrorCliOptions {
  project: string;
  maxDuration?: string;
  maxTransfer?: string;
  maxFiles?: string;
  cutoffMode?: string;
  to?: string;
  include: string[];
  exclude: string[];
  filterFrom?: string;
  concurrency: string;
  bwlimit?: string;
  rps?: string;
  checksum?: boolean;
  resync?: boolean;
  dryRun?: boolean;
  json?: boolean;
  followSymlinks?: boolean;
  ocrEngine?: string;
  ocrStrategy?: string;
  coordinateExtraction?: string;
  metadata: string[];
  state?: string;
  stats?: string;
  minSize?: string;
  maxSize?: string;
  minAge?: string;
  maxAge?: string;
  waitLock?: string;
  lockTtl?: string;
  /** False under --no-lock. */
  lock?: boolean;
  archiveEncoding?: string;
  maxEntries?: string;
  manifest?: string;
  manifestDelimiter?: string;
  manifestPartial?: boolean;
  manifestEncoding?: string;
  manifestSheet?: string;
}

/** The flags every job that sends files takes (mirror, upload). */
export function addTransferOptions(cmd: Command): Command {
  cmd
    .requiredOption('--project <id>', 'the project the documents go to: its id, or its name')
    .option('--to <folder>', 'remote folder path under the project root (default: the root)')
  addPatternOptions(cmd)
    .option('--concurrency <n>', 'most uploads at once (adapts down when the service pushes back)', String(DEFAULT_CONCURRENCY))
    .option('--bwlimit <rate>', BWLIMIT_HELP)
    .option('--rps <n>', 'most requests per second, all calls together')
    .option('--checksum', 'compare files by sha256 instead of size and modification time')
    .option('--resync', 'list the project first and adopt what is there, whatever the checkpoint store remembers')
    .option('--follow-symlinks', 'upload symlinked files that point inside SOURCE (folders are never followed)')
    .addOption(new Option('--ocr-engine <engine>', 'OCR engine for every document').choices(OCR_ENGINES))
    .addOption(new Option('--ocr-strategy <strategy>', 'OCR strategy for every document').choices(OCR_STRATEGIES))
    .addOption(new Option('--coordinate-extraction <strategy>', 'coordinate extraction strategy').choices(COORDINATE_STRATEGIES))
    .option('--metadata <key=value>', 'metadata on every document (repeatable)', collect, [])
    .option('--manifest-partial', 'go on when no row of the manifest names a file of the folder (each file without a row goes up without its metadata)');
  return addLimitOptions(addLeaseOptions(addSizeAgeOptions(addManifestOptions(addArchiveOptions(cmd)))))
    .option('--state <file>', 'checkpoint database (default: FERRY_STATE_DIR or $XDG_STATE_HOME/ferry/<profile>.sqlite)')
    .option('--stats <duration>', STATS_HELP)
    .option('--json', 'print one JSON summary on stdout at the end');
}

/** A nightly window (src/runner/limits.ts): mirror, upload, pull, migrate. */
export function addLimitOptions(cmd: Command): Command {
  return cmd
    .option('--max-duration <duration>', 'start nothing new this long after the run began (e.g. 6h); exit 8, the next run carries on')
    .option('--max-transfer <size>', 'start nothing new once this much content has been started (e.g. 750G); exit 8')
    .option('--max-files <n>', 'start at most this many files; exit 8 when more were left')
    .addOption(new Option('--cutoff-mode <mode>', 'at a limit: soft lets transfers in flight finish, hard cuts them off for the next run to settle').choices(['soft', 'hard']).default('soft'));
}

/** The limit flags as settings; a zero, negative or unreadable limit is refused naming it (exit 2). */
export function limitsFrom(opts: { maxDuration?: string; maxTransfer?: string; maxFiles?: string; cutoffMode?: string }): LimitSettings | undefined {
  const out: LimitSettings = {};
  if (opts.maxDuration !== undefined) {
    const ms = parseDurationFlag('--max-duration', opts.maxDuration);
    if (ms <= 0) throw new ConfigurationError(`--max-duration "${visible(opts.maxDuration)}" is no time at all: give a duration above 0, like 6h`);
    out.maxDurationMs = ms;
  }
  if (opts.maxTransfer !== undefined) {
    const bytes = sizeFlag('--max-transfer', opts.maxTransfer)!;
    if (bytes <= 0) throw new ConfigurationError(`--max-transfer "${visible(opts.maxTransfer)}" is nothing at all: give a size above 0, like 750G`);
    out.maxTransfer = bytes;
  }
  if (opts.maxFiles !== undefined) out.maxFiles = positiveInt('--max-files', opts.maxFiles);
  if (out.maxDurationMs === undefined && out.maxTransfer === undefined && out.maxFiles === undefined) return undefined;
  out.cutoff = opts.cutoffMode === 'hard' ? 'hard' : 'soft';
  return out;
}

/** A manifest of each file's metadata and settings: mirror, upload, check (src/manifest). */
export function addManifestOptions(cmd: Command): Command {
  return cmd
    .option('--manifest <file>', "each file's own metadata and processing settings: a CSV (as Excel saves it) or JSON Lines file with a path column; see docs/cli.md")
    .option('--manifest-delimiter <char>', "the manifest CSV's separator when its header does not tell: , ; | or tab")
    .option('--manifest-encoding <name>', "the manifest CSV's code page when it is not UTF-8 (old Excel's \"CSV (Comma delimited)\": windows-1252, cp850…)")
    .option('--manifest-sheet <name>', "the sheet of an .xlsx manifest to read (the first when not given)");
}

/** The manifest flags as the jobs take them (the file is read where the source opens). */
export function manifestFrom(opts: { manifest?: string; manifestDelimiter?: string; manifestPartial?: boolean; manifestEncoding?: string; manifestSheet?: string }): { manifest?: string; manifestDelimiter?: string; manifestPartial?: boolean; manifestEncoding?: string; manifestSheet?: string } {
  if (opts.manifestEncoding !== undefined && opts.manifest === undefined) throw new ConfigurationError('--manifest-encoding needs --manifest');
  if (opts.manifestSheet !== undefined && opts.manifest === undefined) throw new ConfigurationError('--manifest-sheet needs --manifest');
  if (opts.manifestDelimiter !== undefined && opts.manifest === undefined) throw new ConfigurationError('--manifest-delimiter needs --manifest');
  if (opts.manifestPartial && opts.manifest === undefined) throw new ConfigurationError('--manifest-partial needs --manifest');
  return {
    ...(opts.manifest !== undefined ? { manifest: opts.manifest } : {}),
    ...(opts.manifestDelimiter !== undefined ? { manifestDelimiter: delimiterFlag(opts.manifestDelimiter) } : {}),
    ...(opts.manifestPartial ? { manifestPartial: true } : {}),
    // Checked where the manifest is read (src/manifest/read.ts), before anything is sent: the code
    // pages' library loads only for a run that reads one.
    ...(opts.manifestEncoding !== undefined ? { manifestEncoding: opts.manifestEncoding } : {}),
    ...(opts.manifestSheet !== undefined ? { manifestSheet: opts.manifestSheet } : {}),
  };
}

/** A file the command will write: its folder must exist and take files, and it must not be a folder (exit 2 before anything). */
export function writableFile(flag: string, path: string): void {
  const file = resolvePath(path);
  if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) throw new ConfigurationError(`${flag} ${visible(path)} is a folder: name the file to write`);
  try {
    accessSync(dirnamePath(file), constants.W_OK);
  } catch (err) {
    throw new ConfigurationError(`${flag} ${visible(path)} cannot be written: its folder ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : `is not writable (${(err as NodeJS.ErrnoException).code})`}`);
  }
}

/** How an archive source is read (zip, tar): mirror, upload, check. */
export function addArchiveOptions(cmd: Command): Command {
  return cmd
    .option('--archive-encoding <name>', "code page of archive names that do not say (Windows Explorer's zips: cp437, cp850, cp932…); see docs/cli.md")
    .option('--max-entries <n>', 'refuse an archive of more entries than this (default 1000000)');
}

/** The archive flags as the jobs take them (the code page is checked where the source opens). */
export function archiveFrom(opts: { archiveEncoding?: string; maxEntries?: string }): { archiveEncoding?: string; maxEntries?: number } {
  return {
    ...(opts.archiveEncoding !== undefined ? { archiveEncoding: opts.archiveEncoding } : {}),
    ...(opts.maxEntries !== undefined ? { maxEntries: positiveInt('--max-entries', opts.maxEntries) } : {}),
  };
}

/** The lease every writing command holds on the service (docs/scale-out.md, The lease). */
export function addLeaseOptions(cmd: Command): Command {
  return cmd
    .option('--wait-lock <duration>', 'wait this long for another run to release the destination\'s lease (default: no wait, exit 4)')
    .option('--lock-ttl <duration>', 'how long the lease outlives its last renewal if this run dies (default 30s; 2s to 1h)')
    .option('--no-lock', 'hold no lease on the service: only for one who knows no other run writes here (said in the summary)');
}

/** The lease flags as settings; a TTL outside what the protocol can renew within is refused (exit 2). */
export function leaseSettingsFrom(opts: { waitLock?: string; lockTtl?: string; lock?: boolean }): LeaseSettings {
  const settings: LeaseSettings = { onEvent: leaseEventsOnStderr() };
  if (opts.lock === false) settings.off = true;
  if (opts.waitLock !== undefined) settings.waitMs = parseDurationFlag('--wait-lock', opts.waitLock);
  if (opts.lockTtl !== undefined) {
    if (/^\s*-/.test(opts.lockTtl)) throw new ConfigurationError(`--lock-ttl "${visible(opts.lockTtl)}" is negative: a lease needs a TTL of 2s to 1h`);
    const ttl = parseDurationFlag('--lock-ttl', opts.lockTtl);
    if (ttl < MIN_LEASE_TTL_MS || ttl > MAX_LEASE_TTL_MS) throw new ConfigurationError(`--lock-ttl "${visible(opts.lockTtl)}" is outside 2s to 1h: the lease is renewed every quarter of its TTL, and a run that dies blocks the next for as long`);
    settings.ttlMs = ttl;
  }
  return settings;
}

/** A duration flag, refused with its name when it does not read. */
export function parseDurationFlag(flag: string, text: string): number {
  if (!isDuration(text)) throw new ConfigurationError(`${flag} "${visible(text)}" is not a duration like ${DURATION_EXAMPLES}`);
  return parseDuration(text);
}

/** A size like 500, 10K, 1.5M, 2G (bytes; K, M, G, T are powers of 1024, KiB-style names too). */
export function sizeFlag(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const size = parseSize(text);
  if (Number.isNaN(size)) throw new ConfigurationError(`${flag} "${text}" is not a size like 500, 10K, 1.5M or 2G`);
  return size;
}

/** An age like 90s, 30m, 12h, 7d, 2w (or 1d12h). */
export function ageFlag(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!isAge(text)) throw new ConfigurationError(`${flag} "${text}" is not an age like 90s, 30m, 12h, 7d or 2w`);
  return parseDuration(text);
}

/** --include, --exclude, --filter-from: one syntax for every source (sync/patterns.ts); mirror, upload and pull. */
export function addPatternOptions(cmd: Command): Command {
  return cmd
    .option('--include <glob>', 'only paths matching (repeatable; globs: * within a folder, ** across folders)', collect, [])
    .option('--exclude <glob>', 'leave out paths matching, and all a matching folder holds (repeatable)', collect, [])
    .option('--filter-from <file>', 'rules from a file, one per line: "+ GLOB" takes, "- GLOB" leaves out; the first that matches decides');
}

export function patternsFrom(opts: { include?: string[]; exclude?: string[]; filterFrom?: string }): { include: string[]; exclude: string[]; rules?: FilterRule[] } {
  checkPatternFlags(opts);
  if (!opts.filterFrom) return { include: opts.include ?? [], exclude: opts.exclude ?? [] };
  return { include: [], exclude: [], rules: readFilterFile(opts.filterFrom, `--filter-from ${opts.filterFrom}`) };
}

export const BWLIMIT_HELP = 'most content bytes per second, every transfer of the run together (e.g. 500K, 10M)';

/**
 * --bwlimit: a rate in bytes per second, with the size suffixes, above 0; or a timetable as rclone
 * writes it, `"08:00,512k 19:00,off"` (local time; each slot holds until the next).
 */
export function bwlimitFlag(text: string | undefined): BandwidthLimit | undefined {
  if (text !== undefined && text.includes(',')) {
    try {
      return parseBandwidthLimit(text, parseSize);
    } catch (err) {
      if (!(err instanceof RangeError)) throw err;
      throw new ConfigurationError(`--bwlimit "${visible(text)}": ${err.message}`);
    }
  }
  const rate = sizeFlag('--bwlimit', text);
  if (rate !== undefined && rate < 1) throw new ConfigurationError(`--bwlimit "${text}" is not a rate above 0`);
  return rate;
}

/** The four filters as the CLI takes them (mirror, upload, pull). */
export function addSizeAgeOptions(cmd: Command): Command {
  return cmd
    .option('--min-size <size>', 'leave alone files smaller than this (500, 10K, 1.5M, 2G)')
    .option('--max-size <size>', 'leave alone files larger than this')
    .option('--min-age <age>', 'leave alone files changed less than this long ago (90s, 30m, 12h, 7d, 2w)')
    .option('--max-age <age>', 'leave alone files changed longer ago than this');
}

export function sizeAgeFrom(opts: { minSize?: string; maxSize?: string; minAge?: string; maxAge?: string }): { minSize?: number; maxSize?: number; minAgeMs?: number; maxAgeMs?: number } {
  const out = {
    minSize: sizeFlag('--min-size', opts.minSize),
    maxSize: sizeFlag('--max-size', opts.maxSize),
    minAgeMs: ageFlag('--min-age', opts.minAge),
    maxAgeMs: ageFlag('--max-age', opts.maxAge),
  };
  if (out.minSize !== undefined && out.maxSize !== undefined && out.minSize > out.maxSize) throw new ConfigurationError(`--min-size ${opts.minSize} is larger than --max-size ${opts.maxSize}: no file would be left`);
  if (out.minAgeMs !== undefined && out.maxAgeMs !== undefined && out.minAgeMs > out.maxAgeMs) throw new ConfigurationError(`--min-age ${opts.minAge} is longer than --max-age ${opts.maxAge}: no file would be left`);
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
}

/** `--stats DURATION`: how often a job off a terminal writes a progress record (at least 1 s). */
export const STATS_HELP = 'off a terminal, write a progress record this often (default 30s; e.g. 10s, 5m)';
export function statsFlag(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const ms = parseDurationFlag('--stats', text);
  if (ms < 1000) throw new ConfigurationError(`--stats "${text}" is shorter than a second`);
  return ms;
}

/** Ids are uuids: anything else is a usage error found before any request (exit 2). */
export function uuidFlag(flag: string, value: string): string {
  if (!isUuid(value)) throw new ConfigurationError(`${flag} "${visible(value)}" is not an id: expected a uuid like 0f3c2a9e-5b1d-4c8e-9a7f-2d6e8b1c4a50`);
  return value;
}

export function transferOptionsFrom(source: string, opts: MirrorCliOptions): MirrorOptions {
  return {
    source,
    // An id, or a name the command resolves once it has a client (project-name.ts).
    project: projectFlag('--project', opts.project),
    to: opts.to,
    ...patternsFrom(opts),
    concurrency: positiveInt('--concurrency', opts.concurrency),
    bwlimit: bwlimitFlag(opts.bwlimit),
    checksum: opts.checksum === true,
    resync: opts.resync === true,
    followSymlinks: opts.followSymlinks === true,
    ocrEngine: opts.ocrEngine as MirrorOptions['ocrEngine'],
    ocrStrategy: opts.ocrStrategy as MirrorOptions['ocrStrategy'],
    coordinateExtractionStrategy: opts.coordinateExtraction as MirrorOptions['coordinateExtractionStrategy'],
    metadata: parseMetadata(opts.metadata),
    progress: !opts.json,
    statsIntervalMs: statsFlag(opts.stats),
    ...sizeAgeFrom(opts),
    ...archiveFrom(opts),
    ...manifestFrom(opts),
    lock: leaseSettingsFrom(opts),
    limits: limitsFrom(opts),
  };
}

export interface RunOptions {
  rps?: string | number | undefined;
  state?: string | undefined;
  json: boolean;
  dryRun?: boolean;
  profile?: string | undefined;
}

export function parseMetadata(pairs: string[]): Record<string, string> | undefined {
  if (pairs.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const i = pair.indexOf('=');
    if (i <= 0) throw new ConfigurationError(`--metadata "${visible(pair)}" must look like key=value`);
    if (OWN_METADATA.test(pair.slice(0, i))) throw new ConfigurationError(`--metadata "${visible(pair)}": keys starting with "ferry." are ferry's own (the identity of each document, docs/cli.md); choose another key`);
    out[pair.slice(0, i)] = pair.slice(i + 1);
  }
  return out;
}

export function positiveInt(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new ConfigurationError(`${flag} must be a whole number of at least 1, not "${value}"`);
  return n;
}

export function positiveNumber(flag: string, value: string): number {
  const n = Number(value);
  if (!(n > 0)) throw new ConfigurationError(`${flag} must be a positive number, not "${value}"`);
  return n;
}

export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
