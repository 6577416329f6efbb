// What a pull's destination folder holds and refuses, learnt by trying it in a scratch folder
// inside it (removed after): names Windows refuses, case folding, and how finely it keeps file
// times. The answers are facts of the file system, not of the platform: an NTFS or exFAT drive on
// Linux refuses what Windows refuses, and a Samba share may refuse more.
import { randomBytes } from 'node:crypto';
import { mkdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigurationError } from '../../api/errors.js';
import type { NameRules } from '../name-rules.js';

export interface FolderFacts {
  /** Names of the probe the file system refused (a Windows-illegal character, a trailing dot, a device name). */
  rejected: string[];
  caseInsensitive: boolean;
  /** The coarsest step file times are kept in, in ms: 1 (ext4, NTFS), 10 (exFAT), 2000 (FAT). */
  timeStepMs: number;
}

/** One name for each kind of thing Windows refuses. */
const WINDOWS_PROBES = ['a:b', 'a?b', 'a"b', 'a<b', 'a|b', 'trail.', 'trail ', 'CON', 'aux.txt'];

/** A time with an odd second and 234.567 ms: what it comes back as tells the step. */
const PROBE_TIME_MS = 1_700_000_001_234.567;

export async function probeFolder(root: string, opts: { names: boolean }): Promise<FolderFacts> {
  const dir = join(root, `.ferry-probe-${randomBytes(4).toString('hex')}`);
  try {
    await mkdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EROFS') throw new ConfigurationError(`cannot pull into ${root}: its file system is mounted read-only; nothing was downloaded`);
    if (code === 'EACCES' || code === 'EPERM') throw new ConfigurationError(`cannot pull into ${root}: this user may not write there (${code}); nothing was downloaded`);
    throw new ConfigurationError(`cannot pull into ${root}: a folder cannot be made there (${code ?? (err as Error).message}); nothing was downloaded`);
  }
  try {
    const rejected: string[] = [];
    if (opts.names) {
      for (const name of WINDOWS_PROBES) {
        const ok = await writeFile(join(dir, name), '').then(
          () => true,
          () => false,
        );
        if (!ok) rejected.push(name);
      }
    }
    await writeFile(join(dir, 'case'), '');
    const caseInsensitive = (await stat(join(dir, 'CASE')).catch(() => undefined)) !== undefined;
    const timed = join(dir, 'time');
    await writeFile(timed, '');
    await utimes(timed, PROBE_TIME_MS / 1000, PROBE_TIME_MS / 1000);
    const kept = (await stat(timed)).mtimeMs;
    return { rejected, caseInsensitive, timeStepMs: timeStep(kept) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The largest of 2000, 1000 and 10 ms that the kept time is a whole multiple of; 1 when none. */
export function timeStep(keptMs: number): number {
  for (const step of [2000, 1000, 10]) if (Math.abs(keptMs - Math.round(keptMs / step) * step) < 0.5) return step;
  return 1;
}

/** The rules a probe's refusals call for. */
export function rulesFor(facts: Pick<FolderFacts, 'rejected'>): NameRules {
  return facts.rejected.length > 0 ? 'windows' : 'posix';
}
