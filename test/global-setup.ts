// The CLI tests run the compiled `ferry` command as a user would, so `npm test` builds it here
// first, type-checking src and jobs (tsconfig.json) in the same pass: a type error fails the suite
// before any test runs. A build that succeeded leaves a stamp; while no source is newer than the
// stamp the build is skipped.
// Two suites started at once in one checkout must not rewrite dist/ under each other's running
// CLIs: the build is done under a lock (a directory, created atomically), and the second suite
// finds the stamp fresh and leaves dist/ alone.
// It also makes the run's temp folder (suiteTemp, below).
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, rmdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

/** Names the suite's temp folder once it is made: each of vitest's projects runs this setup. */
const SUITE_TEMP = 'FERRY_TEST_SUITE_TEMP';

/**
 * One temp folder for the whole run, the TMPDIR of every test and of what it starts, removed when
 * the run ends: many files make folders with mkdtemp and leave them (a clean clone's `npm test`
 * left 609 ferry-* folders and 14 checkpoint stores in /tmp). Made once for the three projects,
 * not nested; a short name, for a test carries a path of 4,015 bytes under it; open to all as
 * /tmp is (1777), so that the image's unprivileged user and Chromium reach into it.
 */
function suiteTemp(): (() => void) | undefined {
  if (process.env[SUITE_TEMP]) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'f'));
  chmodSync(dir, 0o1777);
  process.env[SUITE_TEMP] = dir;
  process.env.TMPDIR = dir;
  return () => {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch (err) {
      // A file system a test left mounted in it: said, the rest removed.
      process.stderr.write(`the suite's temp folder ${dir} was not removed whole: ${(err as Error).message}\n`);
    }
  };
}

export default async function setup(): Promise<(() => void) | undefined> {
  const removeTemp = suiteTemp();
  try {
    await build();
  } catch (err) {
    removeTemp?.();
    throw err;
  }
  return removeTemp;
}

async function build(): Promise<void> {
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
