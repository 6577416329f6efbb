// Scratch folders in the system's temporary directory, named for the process that made them
// (`ferry-<kind>-<pid>-XXXXXX`), so that what a process killed with -9 left behind is found and
// removed by the next one that makes a folder of the same kind. One owner for a rule the tar
// source's entry list and the manifest's index both need.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pidAlive } from './processes.js';

/** A new scratch folder of this kind, after sweeping those of dead processes. */
export async function scratchFolder(kind: string): Promise<string> {
  await sweepScratch(kind);
  return mkdtemp(join(tmpdir(), `ferry-${kind}-${process.pid}-`));
}

/** Removes the scratch folders of this kind whose process is gone. */
export async function sweepScratch(kind: string): Promise<void> {
  const pattern = new RegExp(`^ferry-${kind}-(\\d+)-`);
  const names = await readdir(tmpdir()).catch(() => [] as string[]);
  for (const name of names) {
    const pid = Number(pattern.exec(name)?.[1]);
    if (pid && pid !== process.pid && !pidAlive(pid)) await rm(join(tmpdir(), name), { recursive: true, force: true }).catch(() => undefined);
  }
}
