// Flags read one at a time, for the commands that are not a job kind (check, scan, playbooks
// import) and the few flags of no declared setting. Each reads through the declaration of its
// setting (src/settings/declared.ts), so that it takes and refuses what the job commands and job
// files do. Light enough for `--help`: nothing here opens a client, a store or a socket.
import type { BandwidthLimit } from '../sync/bandwidth.js';
import { parseBandwidthLimit } from '../sync/bandwidth.js';
import { isUuid } from '../ids.js';
import { ConfigurationError } from '../errors.js';
import { visible } from '../backends/names.js';
import { parseSize } from '../runner/format.js';
import { parseDuration } from '../duration.js';
import { checkPatternFlags, type FilterRule } from '../sync/filter-rules.js';
import { readFilterFile } from '../config/filter-file.js';
import type { LeaseSettings } from '../backends/project/lease-use.js';
import { breakCommand, leaseEventsOnStderr } from './lease-words.js';
import { SETTINGS, type SettingName } from '../settings/declared.js';
import { readFlag } from '../settings/form.js';
import * as kinds from '../settings/kinds.js';

/** One declared setting's flag, read by its kind and range (exit 2 naming the flag). */
function flagValue(name: SettingName, text: string | undefined): kinds.FormValue | undefined {
  return text === undefined ? undefined : readFlag(SETTINGS[name], text);
}

/** A duration flag of no declared setting, refused with its name when it does not read. */
export function parseDurationFlag(flag: string, text: string): number {
  return parseDuration(String(readFlag({ key: flag, flag, kind: kinds.duration, help: '', resume: false }, text)));
}

/** A size like 500, 10K, 1.5M, 2G (bytes; K, M, G, T are powers of 1024, KiB-style names too). */
export function sizeFlag(flag: string, text: string | undefined): number | undefined {
  return text === undefined ? undefined : parseSize(String(readFlag({ key: flag, flag, kind: kinds.size, help: '', resume: false }, text)));
}

/** An age like 90s, 30m, 12h, 7d, 2w (or 1d12h). */
export function ageFlag(flag: string, text: string | undefined): number | undefined {
  return text === undefined ? undefined : parseDuration(String(readFlag({ key: flag, flag, kind: kinds.age, help: '', resume: false }, text)));
}

/** `--stats DURATION`: how often a job off a terminal writes a progress record (at least 1 s). */
export function statsFlag(text: string | undefined): number | undefined {
  const value = flagValue('stats', text);
  return value === undefined ? undefined : parseDuration(String(value));
}

/** --bwlimit: a rate in bytes per second above 0, or a timetable as rclone writes it (local time). */
export function bwlimitFlag(text: string | undefined): BandwidthLimit | undefined {
  const value = flagValue('bwlimit', text);
  return value === undefined ? undefined : parseBandwidthLimit(String(value), parseSize);
}

/** The lease flags as settings (playbooks import; the job commands read them with the rest). */
export function leaseSettingsFrom(opts: { waitLock?: string; lockTtl?: string; lock?: boolean }): LeaseSettings {
  const settings: LeaseSettings = { onEvent: leaseEventsOnStderr(), breakHint: breakCommand };
  if (opts.lock === false) settings.off = true;
  if (opts.waitLock !== undefined) settings.waitMs = parseDuration(String(flagValue('waitLock', opts.waitLock)));
  if (opts.lockTtl !== undefined) settings.ttlMs = parseDuration(String(flagValue('lockTtl', opts.lockTtl)));
  return settings;
}

/** The manifest flags as check and scan take them (the file is read where the source opens). */
export function manifestFrom(opts: { manifest?: string; manifestDelimiter?: string; manifestPartial?: boolean; manifestEncoding?: string; manifestSheet?: string }): { manifest?: string; manifestDelimiter?: string; manifestPartial?: boolean; manifestEncoding?: string; manifestSheet?: string } {
  for (const [given, flag] of [[opts.manifestEncoding, '--manifest-encoding'], [opts.manifestSheet, '--manifest-sheet'], [opts.manifestDelimiter, '--manifest-delimiter'], [opts.manifestPartial || undefined, '--manifest-partial']] as const) {
    if (given !== undefined && opts.manifest === undefined) throw new ConfigurationError(`${flag} needs --manifest`);
  }
  const delimiter = flagValue('manifestDelimiter', opts.manifestDelimiter);
  return {
    ...(opts.manifest !== undefined ? { manifest: opts.manifest } : {}),
    ...(delimiter !== undefined ? { manifestDelimiter: delimiter === 'tab' ? '\t' : String(delimiter) } : {}),
    ...(opts.manifestPartial ? { manifestPartial: true } : {}),
    // Checked where the manifest is read (src/manifest/read.ts), before anything is sent.
    ...(opts.manifestEncoding !== undefined ? { manifestEncoding: opts.manifestEncoding } : {}),
    ...(opts.manifestSheet !== undefined ? { manifestSheet: opts.manifestSheet } : {}),
  };
}

/** The archive flags as check and scan take them (the code page is checked where the source opens). */
export function archiveFrom(opts: { archiveEncoding?: string; maxEntries?: string; stripComponents?: string }): { archiveEncoding?: string; maxEntries?: number; stripComponents?: number } {
  const maxEntries = flagValue('maxEntries', opts.maxEntries);
  const stripComponents = flagValue('stripComponents', opts.stripComponents);
  return {
    ...(opts.archiveEncoding !== undefined ? { archiveEncoding: opts.archiveEncoding } : {}),
    ...(maxEntries !== undefined ? { maxEntries: Number(maxEntries) } : {}),
    ...(stripComponents !== undefined ? { stripComponents: Number(stripComponents) } : {}),
  };
}

/** --include, --exclude, --filter-from: one syntax for every source (sync/patterns.ts). */
export function patternsFrom(opts: { include?: string[]; exclude?: string[]; filterFrom?: string }): { include: string[]; exclude: string[]; rules?: FilterRule[] } {
  checkPatternFlags(opts);
  if (!opts.filterFrom) return { include: opts.include ?? [], exclude: opts.exclude ?? [] };
  return { include: [], exclude: [], rules: readFilterFile(opts.filterFrom, `--filter-from ${opts.filterFrom}`) };
}

/** The four filters as check and scan take them. */
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

/** Ids are uuids: anything else is a usage error found before any request (exit 2). */
export function uuidFlag(flag: string, value: string): string {
  if (!isUuid(value)) throw new ConfigurationError(`${flag} "${visible(value)}" is not an id: expected a uuid like 0f3c2a9e-5b1d-4c8e-9a7f-2d6e8b1c4a50`);
  return value;
}

export interface RunOptions {
  rps?: string | number | undefined;
  state?: string | undefined;
  json: boolean;
  dryRun?: boolean;
  profile?: string | undefined;
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
