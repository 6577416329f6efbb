// A pull's local-file settings read as the job takes them, apart from the pull itself: every job
// command reads its settings through jobs/definition.ts, and a mirror should not load a pull's
// destination and manifest writer to do so.
import { isAbsolute, relative, resolve } from 'node:path';
import { ConfigurationError } from '../src/api/errors.js';
import { visible } from '../src/text.js';
import { LOCAL_NAMES, type LocalNamesSetting } from '../src/backends/name-rules.js';
import type { PullOptions } from './pull.js';

/** --local-names, --overwrite-changed and --backup-dir as the job takes them; a backup folder inside DIR is refused (it would be part of the copy). */
export function localFilesFrom(opts: { localNames?: string | undefined; overwriteChanged?: boolean | undefined; backupDir?: string | undefined }, dir: string): Pick<PullOptions, 'localNames' | 'overwriteChanged' | 'backupDir'> {
  if (opts.localNames !== undefined && !(LOCAL_NAMES as readonly string[]).includes(opts.localNames)) {
    throw new ConfigurationError(`local names "${visible(opts.localNames)}" are not rules ferry knows: ${LOCAL_NAMES.join(', ')}`);
  }
  if (opts.backupDir !== undefined) {
    const rel = relative(resolve(dir), resolve(opts.backupDir));
    if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) throw new ConfigurationError(`backup folder ${visible(opts.backupDir)} is inside ${visible(dir)}: the replaced files would become part of the copy; name a folder outside it`);
  }
  return {
    ...(opts.localNames !== undefined ? { localNames: opts.localNames as LocalNamesSetting } : {}),
    ...(opts.overwriteChanged ? { overwriteChanged: true } : {}),
    ...(opts.backupDir !== undefined ? { backupDir: opts.backupDir } : {}),
  };
}
