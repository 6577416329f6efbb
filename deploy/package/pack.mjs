#!/usr/bin/env node
// `npm run package [-- --out DIR] [--no-build]`: the tarball ferry is installed from
// (`npm install -g ./ferry-<version>.tgz`), holding the exact dependency tree CI tested.
//
// Why not plain `npm pack`: a published tool's package-lock.json is never installed, and npm
// ignores a shrinkwrap in a local tarball (npm/cli#5325) and drops shrinkwrap support in npm 12;
// package.json's `overrides` (light-my-request, see docs/architecture.md) apply only inside this
// repository. So the tarball bundles every production dependency (bundleDependencies), installed
// here by `npm ci --omit=dev --ignore-scripts` from the lockfile: the native addon
// (better-sqlite3) goes in as its pristine source, and the user's install fetches its prebuilt
// binary or compiles it, as an install from the registry would. Plain `npm pack` in the
// repository is refused (the `prepack` script) so that a tarball without them is never made.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const { values } = parseArgs({
  options: { out: { type: 'string', default: root }, 'no-build': { type: 'boolean', default: false } },
});
const out = resolve(values.out);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const run = (args, cwd) => execFileSync(npm, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });

if (!values['no-build']) run(['run', 'build'], root);
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const stage = mkdtempSync(join(tmpdir(), 'ferry-package-'));
try {
  for (const entry of [...manifest.files, 'package-lock.json', 'README.md']) {
    cpSync(join(root, entry), join(stage, entry), { recursive: true });
  }
  // The staged manifest: every dependency bundled, and no scripts for npm to run at install
  // (an installed copy ships dist/; npm 11 would list `prepare` as an unreviewed install script).
  delete manifest.scripts.prepare;
  delete manifest.scripts.prepack;
  manifest.bundleDependencies = Object.keys(manifest.dependencies);
  writeFileSync(join(stage, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
  run(['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], stage);
  const [packed] = JSON.parse(run(['pack', '--json', '--pack-destination', out], stage));
  console.log(join(out, packed.filename));
} finally {
  rmSync(stage, { recursive: true, force: true });
}
