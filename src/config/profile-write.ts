// Records what `ferry doctor --probe` measured (listingLag, pageSize, formOrder) into a profile of the config
// file, keeping the file's other keys, order and comments (the yaml library's document model), with
// one comment saying when they were measured. The file is replaced whole (written beside it, then
// renamed), so that a run reading it meanwhile sees the old file or the new one, never half.
import { accessSync, constants, readFileSync, realpathSync, statSync, writeFileSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Pair, YAMLMap } from 'yaml';
import { yaml } from '../libraries.js';
import { ConfigurationError } from '../api/errors.js';
import { configFileInUse, loadConfigFile } from './profile.js';

/** The comment ferry writes above what it recorded; an older one of it is replaced, not added to. */
const MEASURED = 'measured by ferry doctor --probe';

/** What is to be recorded: a value set, or `null` to remove one that no longer holds. */
export interface Recorded {
  listingLag?: string | number | undefined;
  pageSize?: number | null | undefined;
  formOrder?: 'any' | 'fields-first' | undefined;
}

export interface ProfileWriteTarget {
  file: string;
  profile: string;
}

/**
 * The file and profile `--write-profile` would write, checked before the probe starts (so that a
 * probe is not run for nothing): a config file in use, a profile named, both writable.
 */
export function profileWriteTarget(configFile: string | undefined, profile: string | undefined, env: NodeJS.ProcessEnv = process.env): ProfileWriteTarget {
  const file = configFileInUse(configFile, env);
  if (!file) throw new ConfigurationError('--write-profile records into a profile of a config file, and none is in use: name one with --config FILE (or FERRY_CONFIG) and -p NAME');
  if (!profile) throw new ConfigurationError(`--write-profile records into a profile, and none is named: give -p NAME (or FERRY_PROFILE, or defaultProfile in ${file})`);
  const config = loadConfigFile(file);
  if (!config.profiles[profile]) throw new ConfigurationError(`--write-profile: profile "${profile}" is not in ${file}`);
  const real = realpathSync(file);
  for (const [what, path] of [['the config file', real], ['its folder (the file is replaced whole)', dirname(real)]] as const) {
    try {
      accessSync(path, constants.W_OK);
    } catch {
      throw new ConfigurationError(`--write-profile: ${what} ${path} cannot be written; nothing was probed`);
    }
  }
  return { file, profile };
}

/** Writes the values into the profile; returns what was set and what was removed. */
export function recordInProfile(target: ProfileWriteTarget, values: Recorded, note: string): { set: Record<string, string | number>; removed: string[] } {
  const real = realpathSync(target.file);
  const { isMap, isScalar, parseDocument } = yaml();
  const doc = parseDocument(readFileSync(real, 'utf8'));
  const map = doc.getIn(['profiles', target.profile]);
  if (!isMap(map)) throw new ConfigurationError(`--write-profile: profiles.${target.profile} in ${target.file} is not a mapping`);
  const set: Record<string, string | number> = {};
  const removed: string[] = [];
  for (const [key, value] of Object.entries(values) as [keyof Recorded, Recorded[keyof Recorded]][]) {
    if (value === undefined) continue;
    if (value === null) {
      if (map.has(key)) {
        map.delete(key);
        removed.push(key);
      }
      continue;
    }
    map.set(key, value);
    set[key] = value;
  }
  if (Object.keys(set).length + removed.length === 0) return { set, removed };
  // One comment, above the first key ferry recorded; an older one of ours goes.
  for (const pair of map.items) {
    if (isScalar(pair.key) && pair.key.commentBefore?.trim().startsWith(MEASURED)) pair.key.commentBefore = undefined;
  }
  const first = Object.keys(set)[0];
  if (first !== undefined) {
    const pair = (map as YAMLMap<unknown, unknown>).items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === first) as Pair<unknown, unknown>;
    if (!isScalar(pair.key)) pair.key = doc.createNode(pair.key);
    (pair.key as { commentBefore?: string }).commentBefore = ` ${MEASURED} ${note}`;
  }
  const temp = `${real}.ferry-${process.pid}.tmp`;
  try {
    writeFileSync(temp, doc.toString(), { mode: statSync(real).mode & 0o777 });
    renameSync(temp, real);
  } catch (err) {
    rmSync(temp, { force: true });
    throw new ConfigurationError(`--write-profile: cannot write ${target.file}: ${(err as Error).message}`);
  }
  return { set, removed };
}
