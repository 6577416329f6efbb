// The CLI tests run the compiled `ferry` command as a user would, so `npm test` builds it here
// first, type-checking src and jobs (tsconfig.json) in the same pass: a type error fails the suite
// before any test runs. A build that succeeded leaves a stamp; while no source is newer than the
// stamp the build is skipped.
// Two suites started at once in one checkout must not rewrite dist/ under each other's running
// CLIs: the build is done under a lock (a directory, created atomically), and the second suite
// finds the stamp fresh and leaves dist/ alone.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = join(root, 'dist', '.checked');
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
    const checked = statSync(stamp).mtimeMs;
    return ['src', 'jobs', 'test', 'tsconfig.json', 'package.json'].every((p) => newest(join(root, p)) < checked);
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
    const started = new Date();
    const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));
    const build = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false'], { cwd: root, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`the build failed (tsc -p tsconfig.json):\n${build.stdout}${build.stderr}`);
    // The stamp's time is the build's start: a source saved during the build is built next time.
    writeFileSync(stamp, '');
    utimesSync(stamp, started, started);
  } finally {
    rmdirSync(lock);
  }
}
