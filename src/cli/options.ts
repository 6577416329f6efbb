// Flags read one at a time: the lease flags of `playbooks import`, `--stats` of `ferry run`, and
// the few flags of no declared setting. A declared one reads through its declaration
// (src/settings/declared.ts), so that it takes and refuses what the job commands and job files do;
// scan and check read theirs as the jobs do (settingsOf in src/settings/values.ts). Light enough for
// `--help`: nothing here opens a client, a store or a socket.
import type { Reply } from './reply.js';
import { isUuid } from '../ids.js';
import { ConfigurationError } from '../errors.js';
import { visible } from '../text.js';
import { parseDuration } from '../duration.js';
import type { LeaseSettings } from '../backends/project/lease-use.js';
import { breakCommand, leaseEventsOnStderr } from './lease-words.js';
import { SETTINGS, type SettingName, type ValueOf } from '../settings/declared.js';
import { readFlag } from '../settings/form.js';
import * as kinds from '../settings/kinds.js';

/** One declared setting's flag, read by its kind and range (exit 2 naming the flag), as its typed value. */
function flagValue<N extends SettingName>(name: N, text: string | undefined): ValueOf<N> | undefined {
  return text === undefined ? undefined : (SETTINGS[name].kind.value(readFlag(SETTINGS[name], text)) as ValueOf<N>);
}

/** A duration flag of no declared setting, refused with its name when it does not read. */
export function parseDurationFlag(flag: string, text: string): number {
  return parseDuration(String(readFlag({ key: flag, flag, kind: kinds.duration, help: '', resume: false }, text)));
}

/** `--stats DURATION`: how often a job off a terminal writes a progress record (at least 1 s). */
export function statsFlag(text: string | undefined): number | undefined {
  return flagValue('stats', text);
}

/** The lease flags as settings (playbooks import; the job commands read them with the rest). */
export function leaseSettingsFrom(opts: { waitLock?: string; lockTtl?: string; lock?: boolean }): LeaseSettings {
  const settings: LeaseSettings = { onEvent: leaseEventsOnStderr(), breakHint: breakCommand };
  if (opts.lock === false) settings.off = SETTINGS.lock.flag;
  if (opts.waitLock !== undefined) settings.waitMs = flagValue('waitLock', opts.waitLock);
  if (opts.lockTtl !== undefined) settings.ttlMs = flagValue('lockTtl', opts.lockTtl);
  return settings;
}

/** Ids are uuids: anything else is a usage error found before any request (exit 2). */
export function uuidFlag(flag: string, value: string): string {
  if (!isUuid(value)) throw new ConfigurationError(`${flag} "${visible(value)}" is not an id: expected a uuid like 0f3c2a9e-5b1d-4c8e-9a7f-2d6e8b1c4a50`);
  return value;
}

export interface RunOptions {
  rps?: string | number | undefined;
  state?: string | undefined;
  /** How the command answers, and what the run shows meanwhile. */
  reply: Reply;
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
