// The CLI tests run the compiled `ferry` command as a user would, so build it first, when the
// sources are newer than the last build. Type errors do not stop the build here: `npm test`
// type-checks on its own before vitest runs.
// Two suites started at once in one checkout must not rewrite dist/ under each other's running
// CLIs: the build is done under a lock (a directory, created atomically), and the second suite
// finds the build fresh and leaves it alone.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = join(root, 'dist', '.built');
const lock = join(root, 'dist', '.building');

function newest(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let t = st.mtimeMs;
  for (const name of readdirSync(path)) t = Math.max(t, newest(join(path, name)));
  return t;
}

function fresh(): boolean {
  try {
    const built = statSync(stamp).mtimeMs;
    return ['src', 'jobs', 'tsconfig.json', 'package.json'].every((p) => newest(join(root, p)) < built);
  } catch {
    return false;
  }
}

export default async function setup(): Promise<void> {
  mkdirSync(join(root, 'dist'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Another suite is building; a lock older than ten minutes was left by a killed one.
      const held = statSync(lock, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > 600_000) rmdirSync(lock);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    if (fresh()) return;
    const started = Date.now();
    const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));
    spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: root, stdio: 'ignore' });
    writeFileSync(stamp, '');
    // The stamp's time is the build's start: a source saved during the build makes the next run build again.
    utimesSync(stamp, new Date(started), new Date(started));
  } finally {
    rmdirSync(lock);
  }
}
