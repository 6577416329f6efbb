// The image's start-up (issue 78): `ferry --version` against `node -e 0`, both in the same image,
// side by side, and the image's size. `node bench/image-startup.mjs [IMAGE]` (default ferry:bench;
// build it first: DOCKER_BUILDKIT=0 docker build --network host -t ferry:bench .).
// Two views, each 7 alternated rounds, the median ratio and its spread:
//   - a whole container: `docker run --rm --network host IMAGE --version` against the same image
//     with node as its entrypoint running `-e 0` (what a CronJob's pod adds before its first request);
//   - processes inside one container: 20 of each, alternated, timed by a node script in the image,
//     (Node and ferry alone, without the engine's container set-up).
// Appends one line to bench/results/image-startup.jsonl.
import { execFile } from 'node:child_process';
import { appendFile, mkdir } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);
const IMAGE = process.argv[2] ?? 'ferry:bench';
const ROUNDS = 7;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const spread = (xs) => [Math.min(...xs), Math.max(...xs)];

async function timed(args) {
  const t = process.hrtime.bigint();
  await run('docker', args);
  return Number(process.hrtime.bigint() - t) / 1e6;
}

const ferryRun = ['run', '--rm', '--network', 'host', IMAGE, '--version'];
const nodeRun = ['run', '--rm', '--network', 'host', '--entrypoint', 'node', IMAGE, '-e', '0'];
await timed(ferryRun); // the first run of an image pays for its layers once
const container = { ferry: [], node: [], ratio: [] };
for (let round = 0; round < ROUNDS; round++) {
  const first = round % 2 === 0;
  const a = first ? await timed(ferryRun) : undefined;
  const n = await timed(nodeRun);
  const f = a ?? (await timed(ferryRun));
  container.ferry.push(f);
  container.node.push(n);
  container.ratio.push(f / n);
}

// Inside one container: each process's wall time, alternated, 20 rounds per batch, 7 batches.
const script = `
const { spawnSync } = require('node:child_process');
const time = (cmd, args) => { const t = process.hrtime.bigint(); spawnSync(cmd, args); return Number(process.hrtime.bigint() - t) / 1e6; };
const out = [];
for (let b = 0; b < ${ROUNDS}; b++) {
  const f = [], n = [];
  for (let i = 0; i < 20; i++) {
    if ((b + i) % 2) { f.push(time('ferry', ['--version'])); n.push(time('node', ['-e', '0'])); }
    else { n.push(time('node', ['-e', '0'])); f.push(time('ferry', ['--version'])); }
  }
  const med = (xs) => xs.sort((x, y) => x - y)[10];
  out.push({ ferry: med(f), node: med(n) });
}
console.log(JSON.stringify(out));`;
const inside = JSON.parse((await run('docker', ['run', '--rm', '--network', 'host', '--entrypoint', 'node', IMAGE, '-e', script])).stdout);
const process_ = { ferry: inside.map((b) => b.ferry), node: inside.map((b) => b.node), ratio: inside.map((b) => b.ferry / b.node) };

const size = Number((await run('docker', ['image', 'inspect', '--format', '{{.Size}}', IMAGE])).stdout.trim());
const node = (await run('docker', ['run', '--rm', '--network', 'host', '--entrypoint', 'node', IMAGE, '--version'])).stdout.trim();
const round1 = (x) => Math.round(x * 10) / 10;
const round2 = (x) => Math.round(x * 100) / 100;
const line = {
  date: new Date().toISOString(),
  image: IMAGE,
  node,
  imageMB: Math.round(size / 1e6),
  container: { ferryMs: round1(median(container.ferry)), nodeMs: round1(median(container.node)), ratio: round2(median(container.ratio)), ratioSpread: spread(container.ratio).map(round2) },
  process: { ferryMs: round1(median(process_.ferry)), nodeMs: round1(median(process_.node)), ratio: round2(median(process_.ratio)), ratioSpread: spread(process_.ratio).map(round2) },
  rounds: ROUNDS,
};
await mkdir(new URL('./results/', import.meta.url), { recursive: true });
await appendFile(new URL('./results/image-startup.jsonl', import.meta.url), `${JSON.stringify(line)}\n`);
console.log(JSON.stringify(line, null, 1));
