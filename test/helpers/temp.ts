// Temporary folders for a test file, removed after its tests: the big-file suites write hundreds
// of MiB each, which left behind would fill a CI machine's disk run after run.
import { afterAll } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A maker of temporary folders (`prefix` then random characters, under the system's temp folder), all removed after the file's tests. */
export function useTempDirs(): (prefix: string) => Promise<string> {
  const made: string[] = [];
  afterAll(async () => {
    await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async (prefix) => {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    made.push(dir);
    return dir;
  };
}
