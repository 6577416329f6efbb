// The memory of one 200 MiB upload (BENCH_UPLOAD_MIB) as a process holds it (issue 78), on the Node that runs this
// script: `node bench/upload-rss.mjs` (or the node of `npm run test:node`'s cache). A whole
// `ferry mirror` of one 200 MiB file into an emulator process, its peak RSS, beside a bare
// baseline in the same run: a node process reading the same file to /dev/null through a stream
// (what any streaming reader pays). Five alternated rounds; the median and the spread of each,
// appended to bench/results/upload-rss.jsonl.
import { createWriteStream } from 'node:fs';
import { appendFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulatorProcess } from './lib.mjs';
import { emulatorEnv, ferryEnv, runFerry } from './ferry-process.mjs';

const MiB = 1024 * 1024;
const ROUNDS = 5;
/** The file's size (MiB): flat memory is the same peak at 200 and at 1,000. */
const SIZE = Number(process.env.BENCH_UPLOAD_MIB ?? 200);
const preload = new URL('./workers/peak-rss.mjs', import.meta.url).pathname;

const work = await mkdtemp(join(tmpdir(), 'ferry-upload-rss-'));
const file = join(work, 'src', 'big.bin');
await mkdir(join(work, 'src'));
const out = createWriteStream(file);
const chunk = Buffer.alloc(MiB);
for (let i = 0; i < SIZE; i++) {
  chunk.fill(i % 251);
  if (!out.write(chunk)) await once(out, 'drain');
}
out.end();
await once(out, 'close');

/** The bare baseline: a stream of the file to /dev/null, its peak RSS (KiB). */
async function bare() {
  const rssFile = join(work, 'bare-rss');
  const child = spawn(process.execPath, ['--import', preload, '-e', `require('node:stream').pipeline(require('node:fs').createReadStream(${JSON.stringify(file)}), require('node:fs').createWriteStream('/dev/null'), (e) => { if (e) throw e; })`], { env: { ...process.env, BENCH_RSS_FILE: rssFile }, stdio: 'inherit' });
  await once(child, 'exit');
  const { readFile } = await import('node:fs/promises');
  return Number(await readFile(rssFile, 'utf8'));
}

const ferry = [];
const baseline = [];
for (let round = 0; round < ROUNDS; round++) {
  const sides = round % 2 === 0 ? ['ferry', 'bare'] : ['bare', 'ferry'];
  for (const side of sides) {
    if (side === 'bare') baseline.push(await bare());
    else {
      // A fresh emulator each round: the service keeps every document.
      const emu = await startEmulatorProcess(undefined);
      try {
        const r = await runFerry(work, 'mirror', ['mirror', join(work, 'src'), '--project', emu.project], { ...ferryEnv(work, `state-${round}`), ...emulatorEnv(emu) });
        if (r.code !== 0) throw new Error(`mirror exit ${r.code}: ${JSON.stringify(r.json)}`);
        ferry.push(r.rssKiB);
      } finally {
        await emu.stop();
      }
    }
  }
}
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { medianMiB: Math.round(s[Math.floor(s.length / 2)] / 1024), minMiB: Math.round(s[0] / 1024), maxMiB: Math.round(s.at(-1) / 1024) };
};
const result = { at: new Date().toISOString(), node: process.version, rounds: ROUNDS, file: `${SIZE} MiB`, ferryMirrorPeakRss: stats(ferry), bareStreamPeakRss: stats(baseline) };
await mkdir(new URL('./results/', import.meta.url), { recursive: true });
await appendFile(new URL('./results/upload-rss.jsonl', import.meta.url), `${JSON.stringify(result)}\n`);
process.stdout.write(`${JSON.stringify(result)}\n`);
await rm(work, { recursive: true, force: true });
