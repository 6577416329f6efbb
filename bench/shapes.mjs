// `npm run bench -- --shapes`: inputs large in one way rather than in number (issue 31), as whole
// `ferry` processes against an emulator process on disk. Writes bench/results/latest-shapes.json.
//
// - One folder of 200,000 files: mirror, warm no-op, cold no-op and check; each step's time per
//   file set beside the scale bench's at 10,000 files in folders of 100 (latest-scale.json), and
//   ferry's peak RSS.
// - One 8 GiB file (sparse: the disk holds the emulator's copy only): mirrored, with ferry's peak
//   RSS and its rate; then mirrored again into a fresh project and killed with SIGKILL half way,
//   and run once more: the service takes an upload in one request, so there is nothing to resume
//   from; what must hold is that the file ends as one document, sent whole once more.
// The tree 64 folders deep, the paths of 4,000 bytes and the zip of 100,000 entries are tests
// (test/jobs/big-shapes.test.ts): they take seconds.
import { mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { FerryClient } from '../dist/src/index.js';
import { startEmulatorProcess } from './lib.mjs';
import { emulatorEnv, ferryEnv, runFerry } from './ferry-process.mjs';

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const FILES = Number(arg('shapes-files', '200000'));
const GIB = Number(arg('shapes-gib', '8'));
const work = await mkdtemp(join(tmpdir(), 'ferry-shapes-'));
const results = [];
const say = (line) => console.error(line);

async function newProject(emu, name) {
  const client = new FerryClient({ address: emu.address, credentials: emu.credentials });
  try {
    return (await client.projects.create({ name, description: 'bench' })).objectIdentifier;
  } finally {
    await client.close();
  }
}

async function documentsIn(emu, project) {
  const client = new FerryClient({ address: emu.address, credentials: emu.credentials });
  try {
    let n = 0;
    for await (const d of client.documents.list(project, { flattenList: true, hidePackagedFiles: false }, { pageSize: 1000 })) if (!d.isDirectory) n++;
    return n;
  } finally {
    await client.close();
  }
}

async function oneFolder() {
  const root = join(work, 'flat');
  await mkdir(root, { recursive: true });
  say(`shapes: writing ${FILES} files into one folder`);
  const content = Buffer.alloc(1024, 'x');
  for (let i = 0; i < FILES; i += 500) {
    const writes = [];
    for (let j = i; j < Math.min(FILES, i + 500); j++) writes.push(writeFile(join(root, `file-${j}.txt`), content));
    await Promise.all(writes);
  }
  const emu = await startEmulatorProcess(join(work, 'emu-flat'));
  const project = await newProject(emu, 'one folder');
  const on = (state) => ferryEnv(work, state, emulatorEnv(emu));
  const steps = [
    ['mirror', ['mirror', root, '--project', project], 'warm', (j) => j.counts?.uploaded === FILES],
    ['warm no-op', ['mirror', root, '--project', project], 'warm', (j) => j.counts?.uploaded === 0 && j.counts?.discovered === FILES],
    ['cold no-op', ['mirror', root, '--project', project], 'cold', (j) => j.counts?.uploaded === 0 && j.coldStart?.adopted === FILES],
    ['check', ['check', root, '--project', project], 'check', (j) => j.matching === FILES],
  ];
  let scale;
  try {
    scale = JSON.parse(await readFile(new URL('./results/latest-scale.json', import.meta.url), 'utf8'));
  } catch {
    scale = undefined;
  }
  try {
    for (const [step, argv, state, ok] of steps) {
      const r = await runFerry(work, step, argv, on(state));
      if (!ok(r.json)) throw new Error(`${step} over one folder of ${FILES}: ${JSON.stringify(r.json).slice(0, 400)}`);
      const usPerFile = (r.ms * 1000) / FILES;
      const at10k = scale?.steps.find((s) => s.step === step)?.sizes.find((x) => x.size === 10_000)?.msPerItem.median;
      const ratio = at10k ? usPerFile / (at10k * 1000) : undefined;
      results.push({ shape: `one folder of ${FILES} files`, step, ms: Math.round(r.ms), usPerFile: Math.round(usPerFile), ferryRssMiB: Math.round(r.rssKiB / 1024), ...(ratio ? { overScale10k: Number(ratio.toFixed(3)) } : {}) });
      say(`${step}: ${(r.ms / 1000).toFixed(1)} s, ${Math.round(usPerFile)} µs a file${ratio ? ` (${ratio.toFixed(2)} x the scale bench at 10,000)` : ''}, ferry ${Math.round(r.rssKiB / 1024)} MiB`);
    }
  } finally {
    await emu.stop();
    await rm(root, { recursive: true, force: true });
    await rm(join(work, 'emu-flat'), { recursive: true, force: true });
  }
}

async function bigFile() {
  const root = join(work, 'big');
  await mkdir(root, { recursive: true });
  const handle = await open(join(root, 'big.bin'), 'w');
  await handle.truncate(GIB * 1024 ** 3);
  await handle.close();
  const size = GIB * 1024 ** 3;
  const data = join(work, 'emu-big');
  let emu = await startEmulatorProcess(data);
  try {
    const project = await newProject(emu, 'big file');
    const r = await runFerry(work, 'big file', ['mirror', root, '--project', project], ferryEnv(work, 'big-1', emulatorEnv(emu)));
    if (r.json?.counts?.uploaded !== 1) throw new Error(`the ${GIB} GiB file was not uploaded: ${JSON.stringify(r.json).slice(0, 400)}`);
    const rate = size / 2 ** 20 / (r.ms / 1000);
    results.push({ shape: `one ${GIB} GiB file`, step: 'mirror', ms: Math.round(r.ms), MiBps: Math.round(rate), ferryRssMiB: Math.round(r.rssKiB / 1024) });
    say(`${GIB} GiB file: ${(r.ms / 1000).toFixed(1)} s, ${Math.round(rate)} MiB/s, ferry ${Math.round(r.rssKiB / 1024)} MiB`);
    await emu.stop();
    await rm(data, { recursive: true, force: true });
    emu = await startEmulatorProcess(data);
    // Killed half way through (by time, the first run's as the yardstick), then run again.
    const again = await newProject(emu, 'big file killed');
    const env = ferryEnv(work, 'big-2', emulatorEnv(emu));
    const killed = await runFerry(work, 'big file killed', ['mirror', root, '--project', again], env, (child) => setTimeout(() => child.kill('SIGKILL'), r.ms / 2));
    if (killed.signal !== 'SIGKILL') throw new Error(`the run to be killed ended first (exit ${killed.code})`);
    const resumed = await runFerry(work, 'big file rerun', ['mirror', root, '--project', again], env);
    const onService = await documentsIn(emu, again);
    const c = resumed.json?.counts ?? {};
    if (c.uploaded + c.reconciled !== 1 || onService !== 1) throw new Error(`after kill -9 and a rerun: ${JSON.stringify(c)}, ${onService} documents on the service`);
    results.push({ shape: `one ${GIB} GiB file`, step: 'killed half way with SIGKILL, then run again', ms: Math.round(resumed.ms), counts: c, documentsOnService: onService, ferryRssMiB: Math.round(resumed.rssKiB / 1024) });
    say(`${GIB} GiB file killed at ${(r.ms / 2000).toFixed(0)} s, run again: ${(resumed.ms / 1000).toFixed(1)} s, ${JSON.stringify(c)}, ${onService} document on the service`);
  } finally {
    await emu.stop();
    await rm(data, { recursive: true, force: true });
    await rm(root, { recursive: true, force: true });
  }
}

try {
  await oneFolder();
  await bigFile();
} finally {
  await rm(work, { recursive: true, force: true });
}
const out = new URL('./results/latest-shapes.json', import.meta.url);
await writeFile(out, `${JSON.stringify({ date: new Date().toISOString(), node: process.version, results }, null, 2)}\n`);
console.log(results.map((r) => JSON.stringify(r)).join('\n'));
console.log(`results written to ${out.pathname}`);
