// `npm run bench -- --scale`: what one item costs as the input grows (issue 31). Whole `ferry`
// processes, as a user runs them, against an emulator process keeping its state on disk: per step
// and size, wall time, time per item, requests per item (as the emulator counts them), ferry's
// peak RSS and the emulator's. Writes bench/results/latest-scale.json, the chart
// docs/performance-scale.svg and the table in docs/performance.md (bench/scale-report.mjs).
//
// Sizes: `--scale-sizes=10000,100000,1000000` (default). Every step runs `--scale-rounds` times
// (default 3; or a count per size) at every size but the largest over 100,000, which runs once
// and by default only the steps a fresh store and a nightly audit make (cold no-op, warm no-op,
// check): its project is written straight into the emulator's database from rows a real mirror
// wrote, each document with a blob of its own (bench/workers/seed-scale.mjs), because uploading a
// million files here would take the better part of an hour a round. `--scale-steps=pull,migrate,
// migrate-verify` runs (and records) those steps alone, at any size; a step another needs first
// (the mirror before a no-op, migrate before its verify) still runs, unrecorded.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cpus, tmpdir, totalmem } from 'node:os';
import { FerryClient } from '../dist/src/index.js';
import { makeTree, startEmulatorProcess } from './lib.mjs';
import { emulatorEnv, ferryEnv, runFerry, twoProfiles } from './ferry-process.mjs';
import { writeScaleReport } from './scale-report.mjs';

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const SIZES = arg('scale-sizes', '10000,100000,1000000').split(',').map(Number);
// One count for every size, or one per size (`--scale-rounds=3,1`: the last count holds for the rest).
const ROUND_COUNTS = arg('scale-rounds', '3').split(',').map(Number);
const roundsAt = (i) => ROUND_COUNTS[Math.min(i, ROUND_COUNTS.length - 1)];
const SEEDED_ABOVE = Number(arg('scale-seeded-above', '100000'));
const STEPS = arg('scale-steps', '') ? new Set(arg('scale-steps', '').split(',')) : undefined;
const SEEDED_STEPS = ['cold no-op', 'warm no-op', 'check', 'scan'];
/** Whether this run records the step (flag names write a step's spaces as dashes). */
const records = (name, seeded) => (STEPS ? STEPS.has(name.replaceAll(' ', '-')) : !seeded || SEEDED_STEPS.includes(name));
const FILE_SIZE = 1024;
const work = await mkdtemp(join(tmpdir(), 'ferry-scale-'));

const ferry = (step, argv, environment) => runFerry(work, step, argv, environment);
const env = (stateDir, extra) => ferryEnv(work, stateDir, extra);

const measurements = [];
function note(step, size, round, r, emuKiB, expect, recorded) {
  const problem = expect(r.json, r.code);
  if (problem) throw new Error(`${step} at ${size}: ${problem} (exit ${r.code}: ${JSON.stringify(r.json).slice(0, 600)})`);
  if (!recorded) return;
  const m = { step, size, round, ms: Math.round(r.ms), msPerItem: r.ms / size, requestsPerItem: r.requests / size, requests: r.requests, ferryRssMiB: Math.round(r.rssKiB / 1024), emulatorRssMiB: Math.round(emuKiB / 1024) };
  measurements.push(m);
  console.error(`${step} ${size} round ${round}: ${(m.ms / 1000).toFixed(1)} s, ${(m.msPerItem * 1000).toFixed(0)} µs an item, ${m.requestsPerItem.toFixed(3)} requests an item, ferry ${m.ferryRssMiB} MiB, emulator ${m.emulatorRssMiB} MiB`);
}

/**
 * Runs one step against its emulators: their peak RSS over the step alone, the requests they were
 * sent. `recorded` false: run only because a later step needs what it leaves.
 */
async function step(name, size, round, emus, argv, environment, expect, recorded = true) {
  for (const e of emus) e.resetPeakRss();
  const before = await Promise.all(emus.map((e) => e.requests()));
  const r = await ferry(name, argv, environment);
  const after = await Promise.all(emus.map((e) => e.requests()));
  r.requests = after.reduce((sum, n, i) => sum + n - before[i], 0);
  note(name, size, round, r, Math.max(...emus.map((e) => e.peakRssKiB())), expect, recorded);
  return r;
}

const counts = (j) => j.counts ?? {};
const expectMirror = (n) => (j) => (counts(j).uploaded === n ? null : `uploaded ${counts(j).uploaded} of ${n}`);
const expectNoop = (n) => (j) => (counts(j).uploaded === 0 && counts(j).failed === 0 && counts(j).discovered === n ? null : 'not a no-op');
const expectCold = (n) => (j) => (counts(j).uploaded === 0 && j.coldStart?.adopted === n ? null : `adopted ${j.coldStart?.adopted} of ${n}, uploaded ${counts(j).uploaded}`);
const expectCheck = (n) => (j, code) => (code === 0 && j.matching === n ? null : `check matched ${j.matching} of ${n}`);
// Every file of the scale tree has the same content: the scan reads and groups them all (its worst case).
const expectScan = (n) => (j, code) => (code === 0 && j.census?.files === n && j.duplicates?.extraCopies === n - 1 ? null : `scan counted ${j.census?.files} of ${n}, ${j.duplicates?.extraCopies} extra copies`);
const expectPull = (n) => (j) => (counts(j).downloaded === n && counts(j).failed === 0 ? null : `pulled ${counts(j).downloaded} of ${n}`);
const expectMigrate = (n) => (j) => (counts(j).copied === n + 1 && counts(j).failed === 0 ? null : `copied ${counts(j).copied} of ${n + 1} (the documents and the project)`);
const expectVerify = () => (j, code) => (code === 0 ? null : `verify found differences`);

async function roundAt(size, round, root) {
  const data = join(work, `emu-${size}-${round}`);
  const a = await startEmulatorProcess(data);
  const client = new FerryClient({ address: a.address, credentials: a.credentials });
  const project = (await client.projects.create({ name: `scale ${size}`, description: 'bench' })).objectIdentifier;
  await client.close();
  const on = (state) => env(state, emulatorEnv(a));
  try {
    await step('mirror', size, round, [a], ['mirror', root, '--project', project], on(`s-${size}-${round}-warm`), expectMirror(size), records('mirror'));
    await pastMirror(size, round, a, project, root, false);
  } finally {
    await a.stop();
    await rm(data, { recursive: true, force: true });
  }
}

/**
 * Every step after the mirror, over emulator `a` holding the tree in `project`: those this run
 * records, and any a recorded one needs first (the warm no-op runs on the mirror's store, or on the
 * cold no-op's where the mirror was seeded; verify compares what migrate copied).
 */
async function pastMirror(size, round, a, project, root, seeded) {
  const on = (state) => env(state, emulatorEnv(a));
  const wants = (name) => records(name, seeded);
  const cold = () => step('cold no-op', size, round, [a], ['mirror', root, '--project', project], on(`s-${size}-${round}-cold`), expectCold(size), wants('cold no-op'));
  if (seeded && (wants('cold no-op') || wants('warm no-op'))) await cold();
  if (wants('warm no-op')) await step('warm no-op', size, round, [a], ['mirror', root, '--project', project], on(seeded ? `s-${size}-${round}-cold` : `s-${size}-${round}-warm`), expectNoop(size));
  if (!seeded && wants('cold no-op')) await cold();
  if (wants('check')) await step('check', size, round, [a], ['check', root, '--project', project], on(`s-${size}-${round}-check`), expectCheck(size));
  if (wants('scan')) await step('scan', size, round, [a], ['scan', root, '--project', project], on(`s-${size}-${round}-scan`), expectScan(size));
  if (wants('pull')) {
    const dest = join(work, `pulled-${size}-${round}`);
    await step('pull', size, round, [a], ['pull', project, dest], on(`s-${size}-${round}-pull`), expectPull(size));
    await rm(dest, { recursive: true, force: true });
  }
  if (!wants('migrate') && !wants('migrate verify')) return;
  const b = await startEmulatorProcess(join(work, `emu-${size}-${round}-b`));
  try {
    const both = env(`s-${size}-${round}-migrate`, await twoProfiles(work, a, b));
    await step('migrate', size, round, [a, b], ['migrate', '--from', 'a', '--to', 'b', '--projects', project], both, expectMigrate(size), wants('migrate'));
    if (wants('migrate verify')) await step('migrate verify', size, round, [a, b], ['migrate', 'verify', '--from', 'a', '--to', 'b', '--projects', project], both, expectVerify());
  } finally {
    await b.stop();
    await rm(join(work, `emu-${size}-${round}-b`), { recursive: true, force: true });
  }
}

/** A size over --scale-seeded-above: the project written into the emulator's database, then the steps after the mirror. */
async function seededAt(size, root) {
  const data = join(work, `emu-${size}`);
  let a = await startEmulatorProcess(data);
  const client = new FerryClient({ address: a.address, credentials: a.credentials });
  const project = (await client.projects.create({ name: `scale ${size}`, description: 'bench' })).objectIdentifier;
  await client.close();
  // The first folder is mirrored for real: its rows are the template of every other one.
  const template = await ferry('seed template', ['mirror', root, '--project', project, '--include', 'd0/f0/**'], env('seed-template', emulatorEnv(a)));
  if (counts(template.json).uploaded !== 100) throw new Error(`the template mirror uploaded ${counts(template.json).uploaded}`);
  await a.stop();
  const seeder = spawn(process.execPath, [new URL('./workers/seed-scale.mjs', import.meta.url).pathname, data, project, root], { stdio: ['ignore', 'inherit', 'inherit'] });
  const [code] = await once(seeder, 'exit');
  if (code !== 0) throw new Error(`seeding ${size} documents failed (exit ${code})`);
  a = await startEmulatorProcess(data);
  try {
    await pastMirror(size, 1, a, project, root, true);
  } finally {
    await a.stop();
    await rm(data, { recursive: true, force: true });
  }
}

function summarize() {
  const spread = (xs) => {
    const s = [...xs].sort((x, y) => x - y);
    return { median: s[Math.floor(s.length / 2)], min: s[0], max: s[s.length - 1], rounds: s.length };
  };
  const steps = [...new Set(measurements.map((m) => m.step))];
  const out = [];
  for (const name of steps) {
    const sizes = [...new Set(measurements.filter((m) => m.step === name).map((m) => m.size))].sort((x, y) => x - y);
    const at = sizes.map((size) => {
      const ms = measurements.filter((m) => m.step === name && m.size === size);
      return {
        size,
        msPerItem: spread(ms.map((m) => m.msPerItem)),
        requestsPerItem: spread(ms.map((m) => m.requestsPerItem)),
        ferryRssMiB: Math.max(...ms.map((m) => m.ferryRssMiB)),
        emulatorRssMiB: Math.max(...ms.map((m) => m.emulatorRssMiB)),
        wallMs: spread(ms.map((m) => m.ms)),
      };
    });
    const small = at[0];
    const large = at[at.length - 1];
    const ratio = large.msPerItem.median / small.msPerItem.median;
    out.push({ step: name, sizes: at, ratio: Number(ratio.toFixed(3)), ratioOf: `${large.size} over ${small.size}`, flat: ratio <= 1.2, rssWithin: Math.max(...at.map((x) => x.ferryRssMiB)) <= 250 });
  }
  return out;
}

const started = Date.now();
try {
  for (const [i, size] of SIZES.entries()) {
    const root = join(work, `tree-${size}`);
    console.error(`scale: writing ${size} files`);
    await makeTree(root, size, FILE_SIZE);
    if (size > SEEDED_ABOVE) await seededAt(size, root);
    else for (let round = 1; round <= roundsAt(i); round++) await roundAt(size, round, root);
    await rm(root, { recursive: true, force: true });
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
// `--scale-merge`: what was not measured this time (a size, or a step at a size) is kept from the
// last results (a step run again after a change that touches it alone).
if (process.argv.includes('--scale-merge')) {
  try {
    const last = JSON.parse(await readFile(new URL('./results/latest-scale.json', import.meta.url), 'utf8'));
    const measuredNow = (m) => measurements.some((n) => n.size === m.size && n.step === m.step);
    measurements.unshift(...last.measurements.filter((m) => !measuredNow(m)));
  } catch {
    // nothing to merge with
  }
}
const steps = summarize();
const result = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: cpus().length,
  memGiB: Math.round(totalmem() / 2 ** 30),
  minutes: Number(((Date.now() - started) / 60_000).toFixed(1)),
  files: `${FILE_SIZE} bytes each, 100 to a folder, 100 folders of folders`,
  seededAbove: SEEDED_ABOVE,
  steps,
  measurements,
};
for (const s of steps) {
  const cells = s.sizes.map((x) => `${x.size}: ${(x.msPerItem.median * 1000).toFixed(0)} µs (${(x.msPerItem.min * 1000).toFixed(0)}-${(x.msPerItem.max * 1000).toFixed(0)}), ${x.requestsPerItem.median.toFixed(3)} req, ferry ${x.ferryRssMiB} MiB, emulator ${x.emulatorRssMiB} MiB`);
  console.log(`${s.step.padEnd(15)} ratio ${s.ratio.toFixed(3)} (${s.ratioOf})${s.flat ? '' : ' OVER 1.2'}${s.rssWithin ? '' : ' RSS OVER 250 MiB'}\n  ${cells.join('\n  ')}`);
}
const out = new URL('./results/latest-scale.json', import.meta.url);
await mkdir(new URL('./results/', import.meta.url), { recursive: true });
await writeFile(out, `${JSON.stringify(result, null, 2)}\n`);
const written = await writeScaleReport(result);
console.log(`\nresults written to ${out.pathname}, chart to ${written.svg}, table to ${written.doc}`);
