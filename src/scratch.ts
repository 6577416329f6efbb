// Scratch folders in the system's temporary directory, named for the process that made them
// (`ferry-<kind>-<pid>-XXXXXX`), so that what a process killed with -9 left behind is found and
// removed by the next one that makes a folder of the same kind. One owner for a rule the tar
// source's entry list, the manifest's index and every scratch database (store/scratch-db.ts) need.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pidAlive } from './processes.js';

/** A new scratch folder of this kind, after sweeping those of dead processes. */
export async function scratchFolder(kind: string): Promise<string> {
  await sweepScratch(kind);
  return mkdtemp(join(tmpdir(), `ferry-${kind}-${process.pid}-`));
}

/** The same, for a constructor that cannot wait. */
export function scratchFolderSync(kind: string): string {
  let names: string[] = [];
  try {
    names = readdirSync(tmpdir());
  } catch {
    // Nothing to sweep.
  }
  for (const name of deadOnes(kind, names)) rmSync(join(tmpdir(), name), { recursive: true, force: true });
  return mkdtempSync(join(tmpdir(), `ferry-${kind}-${process.pid}-`));
}

/** Removes the scratch folders of this kind whose process is gone. */
export async function sweepScratch(kind: string): Promise<void> {
  const names = await readdir(tmpdir()).catch(() => [] as string[]);
  for (const name of deadOnes(kind, names)) await rm(join(tmpdir(), name), { recursive: true, force: true }).catch(() => undefined);
}

/** The names among `names` that are scratch folders of this kind made by a process now gone. */
function deadOnes(kind: string, names: readonly string[]): string[] {
  const pattern = new RegExp(`^ferry-${kind}-(\\d+)-`);
  return names.filter((name) => {
    const pid = Number(pattern.exec(name)?.[1]);
    return pid > 0 && pid !== process.pid && !pidAlive(pid);
  });
}
