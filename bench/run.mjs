// `npm run bench`: ferry measured side by side with the bare alternative, in one run, on this
// machine. Prints a table and writes bench/results/latest.json. `--large` makes the discovery
// 1,000,000 entries (it creates a million files: minutes, and a million inodes).
// `--only=noop,bigfile` runs a subset. `--scale` runs the scale bench instead (bench/scale.mjs),
// `--shapes` the big shapes (bench/shapes.mjs); `--scale-render` draws the scale bench's chart and
// table again from its last results.
if (process.argv.includes('--scale-render')) {
  await (await import('./scale-report.mjs')).renderFromResults();
  process.exit(0);
}
if (process.argv.includes('--scale')) {
  await import('./scale.mjs');
  process.exit(0);
}
if (process.argv.includes('--shapes')) {
  await import('./shapes.mjs');
  process.exit(0);
}
import { execFile } from 'node:child_process';
import { openAsBlob } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { tmpdir, cpus, totalmem } from 'node:os';
import { promisify } from 'node:util';
import { createHash, randomUUID } from 'node:crypto';
import fg from 'fast-glob';
import PQueue from 'p-queue';
import { Agent, FormData, request } from 'undici';
import { mirror, mirrorJobKey } from '../dist/jobs/mirror.js';
import { pull } from '../dist/jobs/pull.js';
import { migrate } from '../dist/jobs/migrate.js';
import { AdaptiveConcurrency } from '../dist/src/runner/adaptive.js';
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { FerryClient } from '../dist/src/index.js';
import { SqliteCheckpointStore } from '../dist/src/store/index.js';
import { identityMetadata } from '../dist/src/backends/project/identity.js';
import { startEmulator } from '../dist/src/emulator/index.js';
import { Readable } from 'node:stream';
import { once } from 'node:events';
import { canPin, makeTree, startEmulatorProcess, timed } from './lib.mjs';
import { runFerry as runFerryProcess } from './ferry-process.mjs';

const run = promisify(execFile);
const large = process.argv.includes('--large');
const CONCURRENCY = 16;
const exitTail = new URL('./workers/exit-tail.mjs', import.meta.url).pathname;
const results = { date: new Date().toISOString(), node: process.version, cpus: cpus().length, memGiB: Math.round(totalmem() / 2 ** 30), benches: [] };
const work = await mkdtemp(join(tmpdir(), 'ferry-bench-'));
const MiB = 1024;

function record(name, ferry, bare, unit, ratio, target, note) {
  results.benches.push({ name, ferry, bare, unit, ratio: Number(ratio.toFixed(3)), target, met: evalTarget(ratio, target), note });
}
/** A target like ">= 0.9"; none (informational) is always met. */
function evalTarget(value, target) {
  if (!target) return true;
  const [op, n] = target.split(' ');
  return op === '>=' ? value >= Number(n) : value <= Number(n);
}

async function token(emu) {
  const res = await request(`${emu.authUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: emu.credentials.clientId, client_secret: emu.credentials.clientSecret, audience: emu.audience }).toString(),
  });
  return (await res.body.json()).access_token;
}

/** The baseline: undici, a token fetched once, FormData over file-backed Blobs, p-queue. */
async function bareUpload(emu, project, root, bearer) {
  const queue = new PQueue({ concurrency: CONCURRENCY });
  const batch = randomUUID();
  let count = 0;
  for await (const path of fg.stream('**', { cwd: root, absolute: true, onlyFiles: true })) {
    await queue.onSizeLessThan(CONCURRENCY * 4);
    void queue.add(async () => {
      const form = new FormData();
      form.set('file', await openAsBlob(path), relative(root, path).split('/').pop());
      const res = await request(`${emu.baseUrl}/projects/${project}/documents?documentUploadIdentifier=${batch}`, { method: 'POST', headers: { authorization: `Bearer ${bearer}` }, body: form });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`bare upload answered ${res.statusCode}`);
      count++;
    });
  }
  await queue.onIdle();
  return count;
}

async function benchThroughput() {
  const emu = await startEmulatorProcess();
  const bearer = await token(emu);
  const client = new FerryClient({ address: emu.address, credentials: emu.credentials });
  const halves = 2;
  const perHalf = 5_000;
  let ferryMs = 0;
  let bareMs = 0;
  // A/B twice over fresh halves of the tree, so neither side always meets the fuller database.
  for (let h = 0; h < halves; h++) {
    const bareRoot = join(work, `bare-${h}`);
    const ferryRoot = join(work, `ferry-${h}`);
    await makeTree(bareRoot, perHalf, 4096);
    await makeTree(ferryRoot, perHalf, 4096);
    // Each side writes into a project of its own, as a real onboarding would.
    const bareProject = (await client.projects.create({ name: `bench bare ${h}`, description: 'bench' })).objectIdentifier;
    const ferryProject = (await client.projects.create({ name: `bench ferry ${h}`, description: 'bench' })).objectIdentifier;
    const b = await timed(() => bareUpload(emu, bareProject, bareRoot, bearer));
    const store = new SqliteCheckpointStore(join(work, `throughput-${h}.sqlite`));
    const f = await timed(() => mirror({ source: ferryRoot, project: ferryProject, concurrency: CONCURRENCY }, { client, store }));
    store.close();
    if (b.result !== perHalf || f.result.counts.uploaded !== perHalf) throw new Error('an upload side did not upload everything');
    bareMs += b.ms;
    ferryMs += f.ms;
    console.error(`throughput round ${h + 1}: bare ${Math.round(b.ms)} ms, ferry ${Math.round(f.ms)} ms for ${perHalf} files each`);
  }
  await client.close();
  await emu.stop();
  const n = halves * perHalf;
  const ferryRate = n / (ferryMs / 1000);
  const bareRate = n / (bareMs / 1000);
  record(`mirror ${n} files of 4 KiB, concurrency ${CONCURRENCY}`, Math.round(ferryRate), Math.round(bareRate), 'files/s', ferryRate / bareRate, '>= 0.95', 'bare: undici + FormData + p-queue, token fetched once; emulator in its own process');
}

async function benchNoop(count) {
  const emu = await startEmulatorProcess();
  const root = join(work, 'noop');
  await makeTree(root, count, 16);
  const state = join(work, 'noop.sqlite');
  // The tree counts as mirrored: its items and folders are written to the checkpoint store the
  // way a completed run leaves them (uploading 100,000 files first would only slow the bench).
  const store = new SqliteCheckpointStore(state, { maxPending: 10_000 });
  const jobKey = mirrorJobKey(emu.baseUrl, { source: root, project: emu.project });
  const run0 = store.startRun({ job: 'mirror', jobKey, params: {}, uploadId: randomUUID() });
  const folders = new Set();
  for await (const entry of fg.stream('**', { cwd: root, stats: true, objectMode: true })) {
    store.recordIntent(jobKey, entry.path, { size: entry.stats.size, mtimeMs: Math.trunc(entry.stats.mtimeMs), sha256: null, uploadId: run0.uploadId, parentId: null, runId: run0.id });
    store.recordUploaded(jobKey, entry.path, { remoteId: randomUUID(), size: entry.stats.size, mtimeMs: Math.trunc(entry.stats.mtimeMs), sha256: null, parentId: null });
    const parts = entry.path.split('/').slice(0, -1);
    for (let i = 1; i <= parts.length; i++) folders.add(parts.slice(0, i).join('/'));
  }
  for (const f of folders) store.setFolder(jobKey, f, randomUUID());
  store.finishRun(run0.id, 'succeeded');
  const client = new FerryClient({ address: emu.address, credentials: emu.credentials });
  const walk = async () => {
    let n = 0;
    for await (const e of fg.stream('**', { cwd: root, stats: true, objectMode: true, onlyFiles: false })) if (e.stats.isFile()) n++;
    return n;
  };
  const rerun = () => mirror({ source: root, project: emu.project }, { client, store });
  // The first rerun over this hand-made store finds no folder digests and looks every file up
  // (what a store written by ferry before the digests existed costs once); it records them, as
  // a completed mirror run does. It is reported, then the steady state is measured.
  const first = await timed(rerun);
  // Five alternating rounds; the median of each side (one slow round, a GC or a WAL checkpoint,
  // moves a mean of so few a lot).
  const bares = [];
  const ferries = [];
  let last;
  for (let round = 0; round < 5; round++) {
    bares.push((await timed(walk)).ms);
    last = await timed(rerun);
    ferries.push(last.ms);
    console.error(`no-op round ${round + 1}: bare walk ${Math.round(bares[round])} ms, ferry rerun ${Math.round(last.ms)} ms (first rerun ${Math.round(first.ms)} ms)`);
  }
  store.close();
  await client.close();
  await emu.stop();
  for (const r of [first, last]) {
    if (r.result.counts.uploaded !== 0 || r.result.counts.unchanged !== count) throw new Error(`no-op rerun was not a no-op: ${JSON.stringify(r.result.counts)}`);
  }
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const bareMs = median(bares);
  const ferryMs = median(ferries);
  record(`no-op rerun over ${count} mirrored files`, Math.round(ferryMs), Math.round(bareMs), 'ms', ferryMs / bareMs, '<= 1.3', `bare: fast-glob walk with stat; medians of 5 alternating rounds (ferry ${ferries.map(Math.round).join('/')} ms, bare ${bares.map(Math.round).join('/')} ms); ferry compares each folder's digest with the checkpoint store and sends no upload`);
  record(`first no-op rerun over a store without folder digests`, Math.round(first.ms), Math.round(bareMs), 'ms', first.ms / bareMs, undefined, 'informational: every file looked up one by one, digests recorded for the next run');
}

/** A client of the emulator whose requests are counted on the wire, by method and path. */
function countingClient(emu, extra = {}) {
  const counts = new Map();
  const dispatcher = new Agent().compose((dispatch) => (options, handler) => {
    const key = `${options.method} ${String(options.path).split('?')[0]}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return dispatch(options, handler);
  });
  return { client: new FerryClient({ address: emu.address, credentials: emu.credentials, dispatcher, ...extra }), counts };
}

/**
 * A cold-store no-op: the same mirror in a fresh state directory (a CronJob's new container) over a
 * project that already holds the tree. Its budget: the warm no-op plus one listing of the project,
 * both measured here; the listing's requests are counted on the wire.
 */
async function benchColdStart(count, pinned = false) {
  const emu = await startEmulatorProcess();
  // Pinned: the emulator on the last core, this process (ferry) on the first, as when the service
  // runs elsewhere; otherwise they share the machine's cores, as everything else here does.
  const cores = cpus().length;
  if (pinned) {
    await run('taskset', ['-a', '-p', '-c', String(cores - 1), String(emu.pid)]);
    await run('taskset', ['-a', '-p', '-c', '0', String(process.pid)]);
  }
  try {
    await coldStartRounds(emu, count, pinned);
  } finally {
    if (pinned) await run('taskset', ['-a', '-p', '-c', `0-${cores - 1}`, String(process.pid)]);
    await emu.stop();
  }
}

async function coldStartRounds(emu, count, pinned) {
  const root = join(work, pinned ? 'cold-pinned' : 'cold');
  await makeTree(root, count, 64);
  const { client, counts } = countingClient(emu);
  const project = (await client.projects.create({ name: 'bench cold start', description: 'bench' })).objectIdentifier;
  const warmStore = new SqliteCheckpointStore(join(work, `cold-warm${pinned ? '-pinned' : ''}.sqlite`));
  const seeded = await mirror({ source: root, project, concurrency: CONCURRENCY }, { client, store: warmStore });
  if (seeded.counts.uploaded !== count) throw new Error('the cold-start bench could not seed its project');
  await mirror({ source: root, project }, { client, store: warmStore }); // folder digests recorded
  const listing = async () => {
    let n = 0;
    for await (const d of client.documents.list(project, { flattenList: true, includePath: true, hidePackagedFiles: false, sorting: 'dateAdded', desc: true }, { pageSize: 1000 })) if (!d.isDirectory) n++;
    return n;
  };
  const warms = [];
  const colds = [];
  const lists = [];
  let listingRequests = 0;
  for (let round = 0; round < 5; round++) {
    warms.push((await timed(() => mirror({ source: root, project }, { client, store: warmStore }))).ms);
    const before = counts.get(`GET /projects/${project}/documents`) ?? 0;
    lists.push((await timed(listing)).ms);
    listingRequests = (counts.get(`GET /projects/${project}/documents`) ?? 0) - before;
    const cold = new SqliteCheckpointStore(join(work, `cold-${pinned ? 'pinned-' : ''}${round}.sqlite`));
    const c = await timed(() => mirror({ source: root, project }, { client, store: cold }));
    cold.close();
    if (c.result.counts.uploaded !== 0 || c.result.coldStart?.adopted !== count) throw new Error(`cold no-op was not a no-op: ${JSON.stringify(c.result.counts)} ${JSON.stringify(c.result.coldStart)}`);
    colds.push(c.ms);
    console.error(`cold start${pinned ? ' (pinned)' : ''} round ${round + 1}: warm no-op ${Math.round(warms[round])} ms, listing ${Math.round(lists[round])} ms (${listingRequests} requests), cold no-op ${Math.round(c.ms)} ms`);
  }
  warmStore.close();
  await client.close();
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const budget = median(warms) + median(lists);
  const how = `budget: warm no-op ${Math.round(median(warms))} ms + one listing of the project ${Math.round(median(lists))} ms (${listingRequests} requests of 1,000 documents); medians of 5 rounds (cold ${colds.map(Math.round).join('/')} ms)`;
  if (pinned) record(`cold-store no-op, ferry and the emulator each on a core of its own (taskset)`, Math.round(median(colds)), Math.round(budget), 'ms', median(colds) / budget, undefined, `informational: as when the service runs elsewhere; all three measured pinned; ${how}`);
  else record(`cold-store no-op over ${count} mirrored files (fresh state directory)`, Math.round(median(colds)), Math.round(budget), 'ms', median(colds) / budget, '<= 1', how);
}

/**
 * A warm nightly run that finds new files: before writing, ferry lists each folder it writes to
 * once, so that a file another store uploaded since is not sent twice. Measured beside the same
 * run that does not look (findPresent: false, the behaviour before), on a project of `count`
 * files in folders of 100, with `added` new files spread over 10 of those folders each round.
 */
async function benchIncremental(count, added) {
  const emu = await startEmulatorProcess();
  const root = join(work, 'incremental');
  await makeTree(root, count, 64);
  const { client, counts } = countingClient(emu);
  const project = (await client.projects.create({ name: 'bench incremental', description: 'bench' })).objectIdentifier;
  const store = new SqliteCheckpointStore(join(work, 'incremental.sqlite'));
  if ((await mirror({ source: root, project, concurrency: CONCURRENCY }, { client, store })).counts.uploaded !== count) throw new Error('the incremental bench could not seed its project');
  const listings = () => counts.get(`GET /projects/${project}/documents`) ?? 0;
  const look = [];
  const bare = [];
  let lookListings = 0;
  for (let round = 0; round < 5; round++) {
    for (const [findPresent, times] of [[true, look], [false, bare]]) {
      const writes = [];
      for (let i = 0; i < added; i++) writes.push(writeFile(join(root, 'd0', `f${(i % 10) * 3}`, `new-${round}-${findPresent}-${i}.txt`), `new ${round} ${i}`));
      await Promise.all(writes);
      const before = listings();
      const r = await timed(() => mirror({ source: root, project, concurrency: CONCURRENCY, findPresent }, { client, store }));
      if (r.result.counts.uploaded !== added) throw new Error(`incremental run uploaded ${r.result.counts.uploaded} of ${added}`);
      if (findPresent) lookListings = listings() - before;
      times.push(r.ms);
    }
    console.error(`incremental round ${round + 1}: ${added} new files, looking ${Math.round(look[round])} ms (${lookListings} listings), not looking ${Math.round(bare[round])} ms`);
  }
  store.close();
  await client.close();
  await emu.stop();
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const ratios = look.map((ms, i) => ms / bare[i]);
  record(`warm mirror of ${added} new files in 10 folders over ${count} mirrored: looking for them on the service first`, Math.round(median(look)), Math.round(median(bare)), 'ms', median(ratios), undefined, `bare: the same run not looking (findPresent: false); ${lookListings} folder listings a run; ratio median of 5 per-round ratios, spread ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}`);
}

async function benchDiscovery(count) {
  const root = join(work, 'tree');
  const empty = Buffer.alloc(0);
  for (let start = 0; start < count; start += 1000) {
    const folder = join(root, `d${Math.floor(start / 100_000)}`, `f${Math.floor(start / 1000)}`);
    await mkdir(folder, { recursive: true });
    await Promise.all(Array.from({ length: Math.min(1000, count - start) }, (_, i) => writeFile(join(folder, `e${start + i}`), empty)));
  }
  const worker = new URL('./workers/discover.mjs', import.meta.url).pathname;
  const ferry = JSON.parse((await run(process.execPath, [worker, 'ferry', root], { maxBuffer: 1 << 20 })).stdout);
  const bare = JSON.parse((await run(process.execPath, [worker, 'bare', root], { maxBuffer: 1 << 20 })).stdout);
  if (ferry.files !== count || bare.files !== count) throw new Error(`discovery counted ${ferry.files}/${bare.files} of ${count}`);
  record(`peak RSS discovering ${count} entries`, Math.round(ferry.maxRssKiB / MiB), Math.round(bare.maxRssKiB / MiB), 'MiB', ferry.maxRssKiB / MiB / 300, '<= 1', `ratio = peak RSS / the 300 MiB budget; bare column: a plain fast-glob walk's peak RSS; walk took ${Math.round(ferry.ms)} ms (bare ${Math.round(bare.ms)} ms)`);
}

/**
 * Archives as big exports bring them: the peak RSS of a dry run of a zip of `count` entries (its
 * central directory read entry by entry) against the budget a folder of that size keeps (300 MiB),
 * and a zip of 150,000 entries, past the fixed limit there once was, mirrored whole.
 */
async function benchArchives(count) {
  const maker = new URL('./workers/make-zip.mjs', import.meta.url).pathname;
  const emu = await startEmulatorProcess(join(work, 'emu-archives'));
  try {
    const env = { ...ferryEnv(emu, 'state-archives'), FERRY_LOG_LEVEL: 'silent' };
    const client = new FerryClient({ address: emu.address, credentials: emu.credentials });
    const newProject = async (name) => (await client.projects.create({ name, description: 'bench archives' })).objectIdentifier;
    const big = join(work, `export-${count}.zip`);
    await run(process.execPath, [maker, big, String(count)]);
    const dry = await runFerryProcess(work, 'zip dry run', ['mirror', big, '--project', await newProject('dry'), '--dry-run'], env);
    if (dry.code !== 0 || dry.json?.counts?.new !== count) throw new Error(`zip dry run: exit ${dry.code}, ${JSON.stringify(dry.json?.counts)}`);
    record(`peak RSS, dry run of a zip of ${count} entries`, Math.round(dry.rssKiB / 1024), 300, 'MiB', dry.rssKiB / 1024 / 300, '<= 1', `ratio = peak RSS / the 300 MiB budget a folder of that size keeps (discovery); ${Math.round(dry.ms)} ms`);
    const export150k = join(work, 'export-150000.zip');
    await run(process.execPath, [maker, export150k, '150000']);
    const whole = await runFerryProcess(work, 'zip mirror', ['mirror', export150k, '--project', await newProject('whole')], env);
    if (whole.code !== 0 || whole.json?.counts?.uploaded !== 150_000) throw new Error(`zip of 150,000: exit ${whole.code}, ${JSON.stringify(whole.json?.counts)}`);
    record('peak RSS mirroring a zip of 150,000 entries whole', Math.round(whole.rssKiB / 1024), 300, 'MiB', whole.rssKiB / 1024 / 300, '<= 1', `uploaded 150000 in ${Math.round(whole.ms / 1000)} s (${Math.round(150_000 / (whole.ms / 1000))} a second), the emulator in a process of its own`);
    await client.close();
  } finally {
    await emu.stop();
  }
}

/**
 * A manifest as big as a big export (issue 53): the dry run of a zip of `count` entries with a
 * manifest of `count` rows (a metadata row for every entry, an OCR setting for a third), beside the
 * same dry run without it, alternated `rounds` times: peak RSS against the +150 MiB the manifest
 * may add, and time (ratio: median of the per-round ratios, with their spread).
 */
async function benchManifest(count, rounds = 5) {
  const maker = new URL('./workers/make-zip.mjs', import.meta.url).pathname;
  const xlsxMaker = new URL('./workers/make-xlsx.mjs', import.meta.url).pathname;
  const emu = await startEmulatorProcess(join(work, 'emu-manifest'));
  try {
    const env = { ...ferryEnv(emu, 'state-manifest'), FERRY_LOG_LEVEL: 'silent' };
    const client = new FerryClient({ address: emu.address, credentials: emu.credentials });
    const project = (await client.projects.create({ name: 'manifest', description: 'bench manifest' })).objectIdentifier;
    await client.close();
    const zip = join(work, `manifest-${count}.zip`);
    await run(process.execPath, [maker, zip, String(count)]);
    const manifest = join(work, `manifest-${count}.csv`);
    const out = createWriteStream(manifest);
    out.write('path,client,matter,ocrStrategy\r\n');
    for (let i = 0; i < count; i++) {
      if (!out.write(`d${Math.floor(i / 100_000)}/f${Math.floor(i / 1000)}/e${i},Client ${i % 97},M-${i},${i % 3 === 0 ? 'always' : ''}\r\n`)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'close');
    // The same rows as a workbook, every text a shared string, as Excel and LibreOffice save one.
    const workbook = join(work, `manifest-${count}.xlsx`);
    await run(process.execPath, [xlsxMaker, workbook, String(count)]);
    const dry = async (sheet) => {
      const r = await runFerryProcess(work, 'manifest dry run', ['mirror', zip, '--project', project, '--dry-run', ...(sheet ? ['--manifest', sheet] : [])], env);
      if (r.code !== 0 || r.json?.counts?.new !== count || (sheet && r.json?.manifest?.rows !== count)) throw new Error(`manifest dry run (${sheet ?? 'none'}): exit ${r.code}, ${JSON.stringify(r.json?.counts)}`);
      return r;
    };
    const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
    const sides = { without: undefined, csv: manifest, xlsx: workbook };
    const rss = { without: [], csv: [], xlsx: [] };
    const ms = { without: [], csv: [], xlsx: [] };
    const ratios = { csv: [], xlsx: [] };
    for (let round = 0; round < rounds; round++) {
      // Alternated, the order rotated each round: a noisy neighbour weighs on every side.
      const order = ['without', 'csv', 'xlsx'];
      for (let k = 0; k < round % 3; k++) order.push(order.shift());
      for (const side of order) {
        const r = await dry(sides[side]);
        rss[side].push(r.rssKiB / 1024);
        ms[side].push(r.ms);
      }
      ratios.csv.push(ms.csv[round] / ms.without[round]);
      ratios.xlsx.push(ms.xlsx[round] / ms.without[round]);
    }
    results.spreads ??= {};
    results.spreads.manifest = { ratio: spread(ratios.csv) };
    results.spreads.manifestXlsx = { ratio: spread(ratios.xlsx) };
    for (const [side, what] of [['csv', 'a manifest of'], ['xlsx', 'an .xlsx manifest (shared strings) of']]) {
      const added = median(rss[side]) - median(rss.without);
      const r = spread(ratios[side]);
      record(`peak RSS, dry run of a zip of ${count} entries with ${what} ${count} rows, beside the same without`, Math.round(median(rss[side])), Math.round(median(rss.without)), 'MiB', added / 150, '<= 1', `ratio = the MiB the manifest adds (median of ${rounds} rounds each side: ${Math.round(added)} MiB) / the 150 MiB it may add; per-round peaks with ${rss[side].map(Math.round).join(', ')}, without ${rss.without.map(Math.round).join(', ')}`);
      record(`time, dry run of a zip of ${count} entries with ${what} ${count} rows, beside the same without`, Math.round(median(ms[side])), Math.round(median(ms.without)), 'ms', r.median, undefined, `ratio: median of ${rounds} alternated per-round ratios, spread ${r.min.toFixed(2)}-${r.max.toFixed(2)}; the manifest is read whole into a scratch SQLite file first, then looked up 256 entries a statement${side === 'xlsx' ? '; the workbook\'s shared strings (two per row) go to a scratch SQLite file of their own first' : ''}`);
    }
  } finally {
    await emu.stop();
  }
}

/**
 * `ferry scan` against the mirror's own dry run (issue 55): the same tree of `count` files, no two
 * of one size (so none is read: a tree without duplicates costs its walk), the same project, each
 * run a whole process, alternated `rounds` times with the side going first swapped. Ratio: the
 * median of the per-round wall-time ratios, with their spread; target at most 1.5.
 */
async function benchScan(count = 20_000, rounds = 5) {
  const emu = await startEmulatorProcess(join(work, 'emu-scan'));
  try {
    const env = { ...ferryEnv(emu, 'state-scan'), FERRY_LOG_LEVEL: 'silent' };
    const client = new FerryClient({ address: emu.address, credentials: emu.credentials });
    const project = (await client.projects.create({ name: 'scan', description: 'bench scan' })).objectIdentifier;
    await client.close();
    const root = join(work, 'scan-tree');
    for (let start = 0; start < count; start += 100) {
      const folder = join(root, `d${Math.floor(start / 10_000)}`, `f${Math.floor(start / 100)}`);
      await mkdir(folder, { recursive: true });
      await Promise.all(Array.from({ length: Math.min(100, count - start) }, (_, k) => writeFile(join(folder, `file-${start + k}.txt`), Buffer.alloc(start + k + 1, 'x'))));
    }
    const dry = async () => {
      const r = await runFerryProcess(work, 'scan: dry run', ['mirror', root, '--project', project, '--dry-run'], env);
      if (r.code !== 0 || r.json?.counts?.new !== count) throw new Error(`dry run: exit ${r.code}, ${JSON.stringify(r.json?.counts)}`);
      return r;
    };
    const scanned = async () => {
      const r = await runFerryProcess(work, 'scan', ['scan', root, '--project', project], env);
      if (r.code !== 0 || r.json?.census?.files !== count || r.json?.duplicates?.hashedFiles !== 0) throw new Error(`scan: exit ${r.code}, ${JSON.stringify(r.json?.census?.files)} files, ${r.json?.duplicates?.hashedFiles} hashed`);
      return r;
    };
    const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
    const ratios = [];
    const scanMs = [];
    const dryMs = [];
    const scanRss = [];
    for (let round = 0; round < rounds; round++) {
      const [a, b] = round % 2 === 0 ? [await dry(), await scanned()] : [await scanned(), await dry()].reverse();
      dryMs.push(a.ms);
      scanMs.push(b.ms);
      scanRss.push(b.rssKiB / 1024);
      ratios.push(b.ms / a.ms);
    }
    const r = spread(ratios);
    results.spreads ??= {};
    results.spreads.scan = { ratio: r };
    record(`time, scan of ${count} files (no two of one size) beside mirror --dry-run of the same, one project`, Math.round(median(scanMs)), Math.round(median(dryMs)), 'ms', r.median, '<= 1.5', `ratio: median of ${rounds} alternated per-round ratios, spread ${r.min.toFixed(2)}-${r.max.toFixed(2)}; the scan lists the project twice (its history, the plan's inventory) where the dry run lists it once; scan peak RSS ${Math.round(median(scanRss))} MiB`);
  } finally {
    await emu.stop();
  }
}

/** The emulator's own speed: 4 KiB uploads by the client, 16 at once, in one process and in two. */
async function benchEmulator() {
  const count = 3_000;
  const body = Buffer.alloc(4096, 'e');
  const uploadAll = async (emu) => {
    const client = new FerryClient({ address: emu.address, credentials: emu.credentials });
    const project = (await client.projects.create({ name: 'emulator bench', description: 'bench' })).objectIdentifier;
    const queue = new PQueue({ concurrency: CONCURRENCY });
    const batch = randomUUID();
    const t = await timed(async () => {
      for (let i = 0; i < count; i++) {
        await queue.onSizeLessThan(CONCURRENCY * 4);
        void queue.add(() => client.documents.upload(project, { stream: Readable.from([body]), size: body.length, filename: `e${i}.txt` }, { documentUploadIdentifier: batch }));
      }
      await queue.onIdle();
    });
    await client.close();
    return count / (t.ms / 1000);
  };
  const inProcess = await startEmulator({ processing: { minDelayMs: 1, maxDelayMs: 5, seed: 1 } });
  const tenant = inProcess.tenants[0];
  const one = await uploadAll({
    address: { baseUrl: inProcess.baseUrl, settingsUrl: inProcess.settingsUrl, authUrl: inProcess.authUrl },
    credentials: { clientId: tenant.clientId, clientSecret: tenant.clientSecret, audience: inProcess.audience },
  });
  await inProcess.close();
  const separate = await startEmulatorProcess();
  const two = await uploadAll(separate);
  await separate.stop();
  record(`emulator: ${count} uploads of 4 KiB, 16 at once, one process vs two`, Math.round(one), Math.round(two), 'docs/s', one / two, undefined, 'ferry column: client and emulator in one process; bare column: emulator in its own process');
}

/** Pull of 10,000 x 4 KiB beside a bare loop: list the documents, GET each url, write the file. */
/** The bare side's listing: every document with content, page after page of 1,000, as plain JSON. */
async function* bareDocuments(baseUrl, project, bearer) {
  for (let page = 1; ; page++) {
    const res = await request(`${baseUrl}/projects/${project}/documents?flattenList=true&includePath=true&hidePackagedFiles=false&pageSize=1000&pageNumber=${page}`, { headers: { authorization: `Bearer ${bearer}` } });
    const body = await res.body.json();
    for (const doc of body.items) if (!doc.isDirectory && doc.url) yield doc;
    if (body.items.length === 0 || page * 1000 >= body.totalCount) return;
  }
}

async function benchPull() {
  const emu = await startEmulatorProcess();
  const bearer = await token(emu);
  const client = new FerryClient({ address: emu.address, credentials: emu.credentials });
  const n = 10_000;
  const root = join(work, 'pull-src');
  await makeTree(root, n, 4096);
  const project = (await client.projects.create({ name: 'bench pull', description: 'bench' })).objectIdentifier;
  const seedStore = new SqliteCheckpointStore(join(work, 'pull-seed.sqlite'));
  await mirror({ source: root, project, concurrency: CONCURRENCY }, { client, store: seedStore });
  seedStore.close();
  let bareMs = 0;
  let ferryMs = 0;
  const ratios = [];
  // A/B three times, into fresh folders, after one uncounted pass that warms the emulator up.
  const rounds = 3;
  for (let round = -1; round < rounds; round++) {
    const bareOut = join(work, `pull-bare-${round}`);
    const bareSide = () => timed(async () => {
      const queue = new PQueue({ concurrency: CONCURRENCY });
      let count = 0;
      for await (const doc of bareDocuments(emu.baseUrl, project, bearer)) {
        await queue.onSizeLessThan(CONCURRENCY * 4);
        void queue.add(async () => {
          const path = join(bareOut, doc.path);
          await mkdir(join(path, '..'), { recursive: true });
          const got = await request(doc.url, { headers: { authorization: `Bearer ${bearer}` } });
          await pipeline(got.body, createWriteStream(path));
          count++;
        });
      }
      await queue.onIdle();
      return count;
    });
    const ferrySide = async () => {
      const store = new SqliteCheckpointStore(join(work, `pull-${round}.sqlite`));
      const f = await timed(() => pull({ project, dir: join(work, `pull-ferry-${round}`), concurrency: CONCURRENCY }, { client, store }));
      store.close();
      return f;
    };
    if (round < 0) {
      await bareSide();
      continue;
    }
    // The side that goes first alternates.
    let b;
    let f;
    if (round % 2 === 0) {
      b = await bareSide();
      f = await ferrySide();
    } else {
      f = await ferrySide();
      b = await bareSide();
    }
    if (b.result !== n || f.result.counts.uploaded !== n) throw new Error(`a pull side did not download everything: bare ${b.result}, ferry ${JSON.stringify(f.result.counts)}`);
    bareMs += b.ms;
    ferryMs += f.ms;
    ratios.push(b.ms / f.ms);
    console.error(`pull round ${round + 1}: bare ${Math.round(b.ms)} ms, ferry ${Math.round(f.ms)} ms for ${n} files each`);
  }
  await client.close();
  await emu.stop();
  const ferryRate = (rounds * n) / (ferryMs / 1000);
  const bareRate = (rounds * n) / (bareMs / 1000);
  const r = spread(ratios);
  results.spreads ??= {};
  results.spreads['pull'] = { ratio: r };
  record(`pull ${n} files of 4 KiB, concurrency ${CONCURRENCY}`, Math.round(ferryRate), Math.round(bareRate), 'files/s', ferryRate / bareRate, '>= 0.95', `bare: one listing (pages of 1000) and undici GETs of each url into files, p-queue; ${rounds} rounds, alternating which goes first; per-round ratios ${r.min.toFixed(3)}-${r.max.toFixed(3)} (median ${r.median.toFixed(3)})`);
}

/**
 * Copies where people keep them (issue 60): a pull of 10,000 documents of 4 KiB onto an NTFS image
 * mounted through ntfs-3g with windows_names, beside the same pull onto this machine's own disk
 * (the ratio is what FUSE and the name mapping cost together), and a warm no-op pull (which looks
 * at each file it wrote) beside a bare walk of the same folder with sizes and times (fast-glob,
 * stats). 5 rounds each, alternating which side goes first.
 */
async function benchCopies() {
  const { execFileSync } = await import('node:child_process');
  const emu = await startEmulatorProcess();
  const client = new FerryClient({ address: emu.address, credentials: emu.credentials });
  const n = 10_000;
  const root = join(work, 'copies-src');
  await makeTree(root, n, 4096);
  const project = (await client.projects.create({ name: 'bench copies', description: 'bench' })).objectIdentifier;
  const seedStore = new SqliteCheckpointStore(join(work, 'copies-seed.sqlite'));
  await mirror({ source: root, project, concurrency: CONCURRENCY }, { client, store: seedStore });
  seedStore.close();
  const image = join(work, 'ntfs.img');
  const mnt = join(work, 'ntfs');
  await mkdir(mnt);
  execFileSync('truncate', ['-s', '2G', image]);
  execFileSync('mkntfs', ['-F', '-Q', image], { stdio: 'ignore' });
  execFileSync('ntfs-3g', ['-o', 'windows_names', image, mnt]);
  const onePull = async (dir, store) => {
    const s = new SqliteCheckpointStore(store);
    try {
      const f = await timed(() => pull({ project, dir, concurrency: CONCURRENCY }, { client, store: s }));
      if (f.result.counts.uploaded + f.result.counts.unchanged + f.result.counts.skipped !== n) throw new Error(`a pull did not account for every document: ${JSON.stringify(f.result.counts)}`);
      return f;
    } finally {
      s.close();
    }
  };
  try {
    const ratios = [];
    const disk = [];
    const ntfs = [];
    for (let round = 0; round < 5; round++) {
      const onDisk = () => onePull(join(work, `copies-disk-${round}`), join(work, `copies-disk-${round}.sqlite`));
      const onNtfs = () => onePull(join(mnt, `copy-${round}`), join(work, `copies-ntfs-${round}.sqlite`));
      const [d, t] = round % 2 === 0 ? [await onDisk(), await onNtfs()] : [await onNtfs(), await onDisk()].reverse();
      disk.push(d.ms);
      ntfs.push(t.ms);
      ratios.push(t.ms / d.ms);
      console.error(`copies round ${round + 1}: own disk ${Math.round(d.ms)} ms, NTFS ${Math.round(t.ms)} ms`);
      await rm(join(mnt, `copy-${round}`), { recursive: true, force: true });
    }
    const r = spread(ratios);
    results.spreads ??= {};
    results.spreads['copies-ntfs'] = { ratio: r };
    record(`pull ${n} files of 4 KiB onto NTFS (ntfs-3g windows_names) beside own disk`, Math.round(spread(ntfs).median), Math.round(spread(disk).median), 'ms', r.median, undefined, `median of 5 alternated rounds, ratio NTFS/own disk ${r.min.toFixed(2)}-${r.max.toFixed(2)}: the cost of FUSE plus the name mapping`);

    // A warm no-op pull against a bare walk of the folder it keeps.
    const kept = join(work, 'copies-disk-0');
    const state = join(work, 'copies-disk-0.sqlite');
    const walk = () => timed(async () => (await fg('**', { cwd: kept, stats: true, dot: true, onlyFiles: true })).length);
    const noops = [];
    const walks = [];
    const checks = [];
    const noopRatios = [];
    const checkRatios = [];
    for (let round = 0; round < 5; round++) {
      const w1 = round % 2 === 0 ? await walk() : undefined;
      const p = await onePull(kept, state);
      if (p.result.counts.uploaded !== 0) throw new Error('the warm pull downloaded something');
      const w = w1 ?? (await walk());
      noops.push(p.ms);
      walks.push(w.ms);
      checks.push(p.result.drift.ms);
      noopRatios.push(p.ms / w.ms);
      checkRatios.push(p.result.drift.ms / w.ms);
    }
    const nr = spread(noopRatios);
    results.spreads['copies-noop'] = { ratio: nr };
    const cr = spread(checkRatios);
    results.spreads['copies-check'] = { ratio: cr };
    record(`the pull's look at the ${n} files it wrote (its drift check) beside a bare walk with stats`, Math.round(spread(checks).median), Math.round(spread(walks).median), 'ms', cr.median, undefined, `median of 5 alternated rounds, ratio ${cr.min.toFixed(2)}-${cr.max.toFixed(2)}: an lstat per file from the store's pages, against fast-glob's readdir and stat`);
    record(`warm no-op pull of ${n} files (each file looked at) beside a bare walk with stats`, Math.round(spread(noops).median), Math.round(spread(walks).median), 'ms', nr.median, undefined, `median of 5 alternated rounds, ratio ${nr.min.toFixed(2)}-${nr.max.toFixed(2)}; the pull also lists the project (${n} documents) and opens its store`);
  } finally {
    await client.close();
    await emu.stop();
    try {
      execFileSync('umount', [mnt]);
    } catch {
      execFileSync('fusermount', ['-u', '-z', mnt]);
    }
  }
}

/**
 * A migration of 2,000 documents between two emulator processes: ferry (in a process of its own,
 * for its peak RSS) beside a bare loop that downloads each document's content into memory and
 * uploads it to the other side (undici + FormData + p-queue, no checkpoints, no folders).
 */
async function benchMigrate() {
  const n = 2_000;
  const size = 16 * 1024;
  // Five rounds, the median of their pairwise ratios: on this 2-core machine a round's time varies
  // by a fifth either way (bare alone 3.0-4.3 s in one run), and three rounds let one of them decide.
  const timedRounds = 5;
  const rounds = timedRounds + 1;
  const a = await startEmulatorProcess();
  const source = new FerryClient({ address: a.address, credentials: a.credentials });
  const root = join(work, 'migrate-src');
  await makeTree(root, n, size);
  const project = (await source.projects.create({ name: 'bench migrate', description: 'bench' })).objectIdentifier;
  const seedStore = new SqliteCheckpointStore(join(work, 'migrate-seed.sqlite'));
  await mirror({ source: root, project, concurrency: CONCURRENCY }, { client: source, store: seedStore });
  seedStore.close();
  await source.close();
  const bearerA = await token(a);
  // `withIdentity`: the loop also sends the metadata ferry writes on every document it carries
  // (src/backends/project/identity.ts: path, size, sha256, mtime, source), which the target stores
  // and serves back; an informational second yardstick, to tell ferry's cost from the service's.
  const bareLoop = async (b, bearerB, withIdentity = false) => {
    const target = new FerryClient({ address: b.address, credentials: b.credentials });
    const bareProject = (await target.projects.create({ name: 'bench migrate bare', description: 'bench' })).objectIdentifier;
    await target.close();
    const queue = new PQueue({ concurrency: CONCURRENCY });
    const batch = randomUUID();
    let count = 0;
    for await (const doc of bareDocuments(a.baseUrl, project, bearerA)) {
      await queue.onSizeLessThan(CONCURRENCY * 4);
      void queue.add(async () => {
        const got = await request(doc.url, { headers: { authorization: `Bearer ${bearerA}` } });
        const bytes = Buffer.from(await got.body.arrayBuffer());
        const form = new FormData();
        form.append('file', new Blob([bytes]), doc.name);
        if (withIdentity) {
          const identity = identityMetadata({ path: doc.path ?? doc.name, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), mtimeMs: Date.parse(doc.dateAdded ?? '') || 0, source: doc.objectIdentifier, sourceProject: project });
          form.append('metadataJson', JSON.stringify(identity));
        }
        const up = await request(`${b.baseUrl}/projects/${bareProject}/documents?documentUploadIdentifier=${batch}`, { method: 'POST', body: form, headers: { authorization: `Bearer ${bearerB}` } });
        if (up.statusCode >= 300) throw new Error(`bare upload answered ${up.statusCode}: ${await up.body.text()}`);
        await up.body.dump();
        count++;
      });
    }
    await queue.onIdle();
    return count;
  };
  // Timed in this process, as the bare loop is: a worker process of its own paid a cold start each
  // round that the bare loop, running here warm, never did (measured: both in fresh processes,
  // ferry 4.7-4.9 s and bare 4.6-4.7 s; ferry fresh against bare warm, 0.75-0.86). Its peak RSS is
  // taken once from a worker process (the last round), where this process's memory does not count.
  const ferryRun = async (b, round) => {
    if (round === rounds - 1) {
      const worker = new URL('./workers/migrate-one.mjs', import.meta.url).pathname;
      const { stdout } = await run(process.execPath, [worker, project, join(work, `migrate-${round}.sqlite`), JSON.stringify(a), JSON.stringify(b), String(CONCURRENCY)], { maxBuffer: 1 << 20 });
      return { ...JSON.parse(stdout), inWorker: true };
    }
    const from = new FerryClient({ address: a.address, credentials: a.credentials, timeoutMs: 600_000 });
    const to = new FerryClient({ address: b.address, credentials: b.credentials, timeoutMs: 600_000 });
    const store = new SqliteCheckpointStore(join(work, `migrate-${round}.sqlite`));
    const f = await timed(() => migrate({ projects: [project], concurrency: CONCURRENCY }, { from, to, store }));
    store.close();
    await Promise.all([from.close(), to.close()]);
    return { counts: f.result.counts, ms: f.ms, maxRssKiB: 0 };
  };
  // Each side of each round into a fresh target emulator (the service is the truth: a second
  // migration into the same tenant would find the first one's project and copy nothing, and the
  // side that went second wrote into a fuller one); the side that goes first alternates, and one
  // uncounted bare pass warms the source up first.
  const warm = await startEmulatorProcess();
  await bareLoop(warm, await token(warm));
  await warm.stop();
  let bareMs = 0;
  let ferryMs = 0;
  let maxRssKiB = 0;
  const ratios = [];
  const identityRatios = [];
  let identityMs = 0;
  for (let round = 0; round < rounds; round++) {
    let roundBare = 0;
    let roundFerry = 0;
    let roundIdentity = 0;
    const bareSide = (withIdentity) => async () => {
      const b = await startEmulatorProcess();
      const bearerB = await token(b);
      const bare = await timed(() => bareLoop(b, bearerB, withIdentity));
      await b.stop();
      if (bare.result !== n) throw new Error(`the bare migration copied ${bare.result} of ${n}`);
      if (withIdentity) roundIdentity = bare.ms;
      else roundBare = bare.ms;
    };
    const sides = [bareSide(false), bareSide(true), async () => {
      const b = await startEmulatorProcess();
      const ferry = await ferryRun(b, round);
      await b.stop();
      // The documents plus the project itself: one item more than the bare loop carries.
      if (ferry.counts.uploaded !== n + 1) throw new Error(`ferry's migration did not copy everything: ${JSON.stringify(ferry.counts)}`);
      if (ferry.inWorker) maxRssKiB = ferry.maxRssKiB;
      else roundFerry = ferry.ms;
    }];
    for (const side of round % 2 === 0 ? sides : sides.reverse()) await side();
    if (round === rounds - 1) continue;
    bareMs += roundBare;
    ferryMs += roundFerry;
    ratios.push(roundBare / roundFerry);
    identityRatios.push(roundIdentity / roundFerry);
    identityMs += roundIdentity;
    console.error(`migrate round ${round + 1}: bare ${Math.round(roundBare)} ms, bare with ferry's metadata ${Math.round(roundIdentity)} ms, ferry ${Math.round(roundFerry)} ms`);
  }
  await a.stop();
  const ferry = { ms: ferryMs / timedRounds, maxRssKiB };
  const bare = { ms: bareMs / timedRounds };
  const r = spread(ratios);
  results.spreads ??= {};
  const ri = spread(identityRatios);
  results.spreads['migrate'] = { ratio: r, ratioToBareWithIdentity: ri };
  console.error(`migrate: bare ${Math.round(bare.ms)} ms, ferry ${Math.round(ferry.ms)} ms for ${n} documents (mean of ${timedRounds}); ferry peak RSS ${Math.round(maxRssKiB / 1024)} MiB (a worker process)`);
  const rate = (ms) => n / (ms / 1000);
  record(`migrate ${n} documents of 16 KiB between two emulators, concurrency ${CONCURRENCY}`, Math.round(rate(ferry.ms)), Math.round(rate(bare.ms)), 'docs/s', r.median, '>= 0.95', `bare = list, download into memory, upload with FormData, p-queue; ferry also checkpoints, recreates folders and carries metadata; both timed in the bench process; ${timedRounds} rounds, each side into a fresh target; ratio: median of the per-round ratios, spread ${r.min.toFixed(3)}-${r.max.toFixed(3)}; docs/s columns: means`);
  record('migrate beside a bare loop that also sends ferry\'s per-document metadata', Math.round(rate(ferry.ms)), Math.round(rate(identityMs / timedRounds)), 'docs/s', ri.median, undefined, `informational: the same bare loop, each upload carrying the identity metadata ferry writes (path, size, sha256, mtime, source), which the target stores and serves back; median of the per-round ratios, spread ${ri.min.toFixed(3)}-${ri.max.toFixed(3)}`);
  record('migrate bytes per second (same run)', Math.round((n * size) / (ferry.ms / 1000) / 1024), Math.round((n * size) / (bare.ms / 1000) / 1024), 'KiB/s', bare.ms / ferry.ms, undefined, 'informational');
  record('migrate peak RSS of the ferry process', Math.round(ferry.maxRssKiB / 1024), 0, 'MiB', 0, undefined, 'informational: peak RSS (VmHWM) of the worker process that ran the migration (node itself is about 45 MiB)');
}

/** Under the emulator's rate limit of R requests/s: ferry's adaptive concurrency beside a fixed-concurrency loop that waits out each 429. */
async function benchRateLimit() {
  const R = 100;
  const n = 1_500;
  const emu = await startEmulatorProcess(undefined, { BENCH_RATE_LIMIT: `${R},${R}` });
  const root = join(work, 'rl-src');
  await makeTree(root, n, 1024);
  let ferry429 = 0;
  let ferryRequests = 0;
  const concurrency = new AdaptiveConcurrency({ max: CONCURRENCY });
  const client = new FerryClient({
    address: emu.address,
    credentials: emu.credentials,
    retry: { maxRetries: 10 },
    onRetry: (info) => {
      if (info.status === 429) ferry429++;
    },
  });
  const project = (await client.projects.create({ name: 'bench rate limit', description: 'bench' })).objectIdentifier;
  await new Promise((r) => setTimeout(r, 1500)); // a full bucket for each side
  const store = new SqliteCheckpointStore(join(work, 'rl.sqlite'));
  const f = await timed(() => mirror({ source: root, project, concurrency: CONCURRENCY }, { client, store, concurrency }));
  store.close();
  ferryRequests = f.result.counts.uploaded + ferry429 + 2;
  await client.close();
  // The bare side: xargs -P 16 curl --retry, in effect: 16 at once, each 429 waited out and sent again.
  const bearer = await token(emu);
  await new Promise((r) => setTimeout(r, 1500));
  let bare429 = 0;
  let bareRequests = 0;
  const bareProject = project;
  const b = await timed(async () => {
    const queue = new PQueue({ concurrency: CONCURRENCY });
    const batch = randomUUID();
    let count = 0;
    for await (const path of fg.stream('**', { cwd: root, absolute: true, onlyFiles: true })) {
      await queue.onSizeLessThan(CONCURRENCY * 4);
      void queue.add(async () => {
        for (;;) {
          const form = new FormData();
          form.set('file', await openAsBlob(path), `bare-${relative(root, path).replace(/\//g, '-')}`);
          bareRequests++;
          const res = await request(`${emu.baseUrl}/projects/${bareProject}/documents?documentUploadIdentifier=${batch}`, { method: 'POST', headers: { authorization: `Bearer ${bearer}` }, body: form });
          await res.body.dump();
          if (res.statusCode === 429) {
            bare429++;
            await new Promise((r) => setTimeout(r, Number(res.headers['retry-after'] ?? 1) * 1000));
            continue;
          }
          if (res.statusCode !== 200) throw new Error(`bare upload answered ${res.statusCode}`);
          count++;
          return;
        }
      });
    }
    await queue.onIdle();
    return count;
  });
  await emu.stop();
  if (f.result.counts.uploaded !== n || b.result !== n) throw new Error('a rate-limited side did not upload everything');
  const ferryRate = n / (f.ms / 1000);
  const bareRate = n / (b.ms / 1000);
  console.error(`rate limit ${R}/s: ferry ${ferryRate.toFixed(1)} docs/s with ${ferry429} 429s of ~${ferryRequests} requests; fixed concurrency ${bareRate.toFixed(1)} docs/s with ${bare429} of ${bareRequests}`);
  record(`goodput under a limit of ${R} requests/s (${n} uploads)`, Number(ferryRate.toFixed(1)), Number(bareRate.toFixed(1)), 'docs/s', ferryRate / R, '>= 0.9', `ratio = ferry's goodput / R; bare column: fixed concurrency ${CONCURRENCY} that waits out each 429 (xargs + curl --retry, in effect)`);
  record(`share of requests answered 429 under that limit`, Number(((100 * ferry429) / ferryRequests).toFixed(1)), Number(((100 * bare429) / bareRequests).toFixed(1)), '%', ferry429 / ferryRequests, '<= 0.05', 'ratio = ferry\'s share; bare column: the fixed-concurrency loop\'s share');
}

/** Median, least and most of a list of figures. */
function spread(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)], min: sorted[0], max: sorted[sorted.length - 1], runs: sorted.length };
}

/** The environment of a `ferry` command pointed at an emulator process: no config file, its own state. */
function ferryEnv(emu, stateDir) {
  return {
    HOME: work,
    XDG_CONFIG_HOME: join(work, 'no-config'),
    FERRY_BASE_URL: emu.baseUrl,
    FERRY_SETTINGS_URL: emu.settingsUrl,
    FERRY_AUTH_URL: emu.authUrl,
    FERRY_AUDIENCE: emu.audience,
    FERRY_CLIENT_ID: emu.credentials.clientId,
    FERRY_CLIENT_SECRET: emu.credentials.clientSecret,
    FERRY_STATE_DIR: join(work, stateDir),
    FERRY_LOG_LEVEL: 'silent',
  };
}

/** Wall time of one process, ms. */
async function wallOf(argv, env) {
  const start = process.hrtime.bigint();
  await run(argv[0], argv.slice(1), { env: { ...process.env, ...env }, maxBuffer: 1 << 22 }).catch((err) => {
    throw new Error(`${argv.join(' ')} failed: ${err.stderr || err.message}`);
  });
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/**
 * Start-up: `--version`, `mirror --help` and a no-op mirror of an empty tree (a real run against
 * an emulator process: profile, store, token, listing), each beside bare `node -e 0`, taken in
 * turn A B A B so drift hits both; the ratio is the median of the pairwise ratios.
 */
async function benchStartup(rounds = 7) {
  const emu = await startEmulatorProcess();
  const empty = join(work, 'startup-empty');
  await mkdir(empty, { recursive: true });
  const client = new FerryClient({ address: emu.address, credentials: emu.credentials });
  const project = (await client.projects.create({ name: 'bench startup', description: 'bench' })).objectIdentifier;
  await client.close();
  const ferry = new URL('../bin/ferry.js', import.meta.url).pathname;
  const env = ferryEnv(emu, 'startup-state');
  const cases = [
    ['ferry --version', [process.execPath, ferry, '--version'], '<= 2'],
    ['ferry mirror --help', [process.execPath, ferry, 'mirror', '--help'], '<= 2'],
    ['ferry mirror of an empty tree (no-op)', [process.execPath, ferry, 'mirror', empty, '--project', project, '--json'], undefined],
  ];
  for (const [name, argv, target] of cases) {
    const ratios = [];
    const ferryMs = [];
    const bareMs = [];
    await wallOf(argv, env); // warm-up
    for (let i = 0; i < rounds; i++) {
      const f = await wallOf(argv, env);
      const b = await wallOf([process.execPath, '-e', '0'], env);
      ferryMs.push(f);
      bareMs.push(b);
      ratios.push(f / b);
    }
    const r = spread(ratios);
    const f = spread(ferryMs);
    console.error(`${name}: ${Math.round(f.median)} ms (${Math.round(f.min)}-${Math.round(f.max)}), ratio ${r.median.toFixed(2)} (${r.min.toFixed(2)}-${r.max.toFixed(2)})`);
    record(`start-up: ${name}`, Math.round(f.median), Math.round(spread(bareMs).median), 'ms', r.median, target, `bare: node -e 0; ${rounds} pairs; ratio median of pairwise ratios, spread ${r.min.toFixed(2)}-${r.max.toFixed(2)}`);
    results.spreads ??= {};
    results.spreads[`start-up: ${name}`] = { ratio: r, ferryMs: f };
  }
  // The time a process takes after it asks to exit: Node waits there for work on its own threads
  // (undici's WebAssembly compiled again by the optimizing compiler: bin/ferry.js).
  const exitFile = join(work, 'exit-at');
  const tailOf = async (argv) => {
    await rm(exitFile, { force: true });
    const [node, ...rest] = argv;
    await wallOf([node, '--import', exitTail, ...rest], { ...env, BENCH_EXIT_FILE: exitFile });
    const ended = Date.now();
    return ended - Number(await readFile(exitFile, 'utf8'));
  };
  const tails = [];
  const bareTails = [];
  for (let i = 0; i < rounds; i++) {
    tails.push(await tailOf(cases[2][1]));
    bareTails.push(await tailOf([process.execPath, '-e', 'process.exit(0)']));
  }
  const t = spread(tails);
  const bt = spread(bareTails);
  console.error(`exit of a no-op mirror: ${t.median} ms (${t.min}-${t.max}); node -e 'process.exit(0)': ${bt.median} ms`);
  record('start-up: exit of a no-op mirror (from process.exit to its end)', t.median, bt.median, 'ms', t.median / Math.max(bt.median, 1), undefined, `bare: node -e 'process.exit(0)'; ${rounds} pairs; ferry ${t.min}-${t.max} ms, bare ${bt.min}-${bt.max} ms (ms resolution)`);
  await emu.stop();
}

/**
 * Goodput when the service hiccups: the same mirror (1,500 files of 1 KiB, concurrency 16) into an
 * emulator process answering a share of requests 429 or 503 (Retry-After: 1) or dropping the
 * connection at random, beside the same mirror into a clean one; 3 runs of each, interleaved.
 */
async function benchFaults(rounds = 3) {
  const n = 1_500;
  const root = join(work, 'faults-src');
  await makeTree(root, n, 1024);
  const mixes = [
    ['clean', ''],
    ['429 5 %, 503 5 %, resets 2 %', '429=0.05,503=0.05,reset=0.02', '>= 0.5'],
    ['503 5 %, resets 2 %', '503=0.05,reset=0.02', '>= 0.8'],
    ['429 5 %', '429=0.05', '>= 0.5'],
  ];
  const rates = new Map(mixes.map(([name]) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, spec] of mixes) {
      const emu = await startEmulatorProcess(undefined, spec ? { BENCH_FAULTS: `${spec},seed=${round + 1}` } : {});
      const client = new FerryClient({ address: emu.address, credentials: emu.credentials });
      const project = (await client.projects.create({ name: `bench faults ${round}`, description: 'bench' })).objectIdentifier;
      const store = new SqliteCheckpointStore(join(work, `faults-${round}-${rates.get(name).length}-${name.length}.sqlite`));
      const f = await timed(() => mirror({ source: root, project, concurrency: CONCURRENCY }, { client, store }));
      store.close();
      const pacing = client.transport.pacing;
      await client.close();
      await emu.stop();
      const c = f.result.counts;
      if (c.uploaded + c.reconciled !== n || c.failed !== 0) throw new Error(`mirror under "${name}" did not carry everything: ${JSON.stringify(c)}`);
      const rate = n / (f.ms / 1000);
      rates.get(name).push(rate);
      console.error(`faults round ${round + 1}, ${name}: ${rate.toFixed(0)} files/s (pacing ${JSON.stringify(pacing)})`);
    }
  }
  const clean = spread(rates.get('clean'));
  record(`mirror ${n} x 1 KiB, clean service (concurrency ${CONCURRENCY})`, Math.round(clean.median), Math.round(clean.median), 'files/s', 1, undefined, `median of ${rounds}, spread ${Math.round(clean.min)}-${Math.round(clean.max)} files/s`);
  results.spreads ??= {};
  results.spreads['faults: clean'] = clean;
  for (const [name, , target] of mixes.slice(1)) {
    const s = spread(rates.get(name));
    const ratios = rates.get(name).map((r, i) => r / rates.get('clean')[i]);
    const r = spread(ratios);
    record(`mirror ${n} x 1 KiB under ${name}`, Math.round(s.median), Math.round(clean.median), 'files/s', r.median, target, `bare column: the same mirror, clean service; ratio median of ${rounds} runs (each beside the clean run of its round), spread ${r.min.toFixed(2)}-${r.max.toFixed(2)}`);
    results.spreads[`faults: ${name}`] = { filesPerSecond: s, ratio: r };
  }
  // A clean run of 1,500 files lasts under 3 s, so the fixed costs of a fault (a 1 s Retry-After
  // on one of the first, serial requests; the last files' chained retries) weigh heavily in it.
  // The same mixes over 6,000 files show the pace between them (informational, one round).
  const longRoot = join(work, 'faults-long');
  await makeTree(longRoot, 6_000, 1024);
  const longRates = {};
  for (const [name, spec] of mixes) {
    const emu = await startEmulatorProcess(undefined, spec ? { BENCH_FAULTS: `${spec},seed=9` } : {});
    const client = new FerryClient({ address: emu.address, credentials: emu.credentials });
    const project = (await client.projects.create({ name: 'bench faults long', description: 'bench' })).objectIdentifier;
    const store = new SqliteCheckpointStore(join(work, `faults-long-${name.length}.sqlite`));
    const f = await timed(() => mirror({ source: longRoot, project, concurrency: CONCURRENCY }, { client, store }));
    store.close();
    await client.close();
    await emu.stop();
    const c = f.result.counts;
    if (c.uploaded + c.reconciled !== 6_000 || c.failed !== 0) throw new Error(`the long mirror under "${name}" did not carry everything: ${JSON.stringify(c)}`);
    longRates[name] = 6_000 / (f.ms / 1000);
    console.error(`faults, 6,000 files, ${name}: ${longRates[name].toFixed(0)} files/s`);
  }
  for (const [name] of mixes.slice(1)) {
    record(`mirror 6000 x 1 KiB under ${name} (one round)`, Math.round(longRates[name]), Math.round(longRates.clean), 'files/s', longRates[name] / longRates.clean, undefined, 'informational: the pace between the fixed costs; bare column: the same 6,000 files, clean service');
  }
}

/**
 * What a shell script would do: `find SRC -type f -print0 | xargs -0 -P 16 -I{} curl -F file=@{}`
 * (one curl process per file, the token fetched once), beside `ferry mirror` run as a command of
 * its own over the same 2,000 files. 3 rounds, alternating which goes first.
 */
async function benchXargs(rounds = 3) {
  const n = 2_000;
  const emu = await startEmulatorProcess();
  const bearer = await token(emu);
  const client = new FerryClient({ address: emu.address, credentials: emu.credentials });
  const ferry = new URL('../bin/ferry.js', import.meta.url).pathname;
  const env = ferryEnv(emu, 'xargs-state');
  const ratios = [];
  let ferryMs = 0;
  let bareMs = 0;
  for (let round = 0; round < rounds; round++) {
    const root = join(work, `xargs-${round}`);
    await makeTree(root, n, 4096);
    const ferryProject = (await client.projects.create({ name: `bench xargs ferry ${round}`, description: 'bench' })).objectIdentifier;
    const bareProject = (await client.projects.create({ name: `bench xargs curl ${round}`, description: 'bench' })).objectIdentifier;
    const url = `${emu.baseUrl}/projects/${bareProject}/documents?documentUploadIdentifier=${randomUUID()}`;
    const script = `find "$1" -type f -print0 | xargs -0 -P 16 -I{} curl -sS -o /dev/null -H "authorization: Bearer $2" -F "file=@{}" "$3"`;
    const sides = [
      async () => {
        const b = await wallOf(['/bin/sh', '-c', script, 'sh', root, bearer, url], {});
        bareMs += b;
        return b;
      },
      async () => {
        const f = await wallOf([process.execPath, ferry, 'mirror', root, '--project', ferryProject, '--concurrency', String(CONCURRENCY), '--json'], env);
        ferryMs += f;
        return f;
      },
    ];
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    const ms = [0, 0];
    for (const k of order) ms[k] = await sides[k]();
    const [bareCount, ferryCount] = await Promise.all([bareProject, ferryProject].map(async (p) => {
      let count = 0;
      for await (const doc of client.documents.list(p, { flattenList: true, hidePackagedFiles: false })) if (!doc.isDirectory) count++;
      return count;
    }));
    if (bareCount !== n || ferryCount !== n) throw new Error(`xargs bench: curl uploaded ${bareCount}, ferry ${ferryCount} of ${n}`);
    ratios.push(ms[0] / ms[1]);
    console.error(`xargs round ${round + 1}: find | xargs -P16 curl ${Math.round(ms[0])} ms, ferry mirror ${Math.round(ms[1])} ms for ${n} files`);
  }
  await client.close();
  await emu.stop();
  const r = spread(ratios);
  results.spreads ??= {};
  results.spreads['xargs'] = { ratio: r };
  const rate = (ms) => (rounds * n) / (ms / 1000);
  record(`ferry mirror of ${n} files of 4 KiB beside find | xargs -P16 curl -F`, Math.round(rate(ferryMs)), Math.round(rate(bareMs)), 'files/s', rate(ferryMs) / rate(bareMs), '>= 5', `both as commands (ferry's start-up and its checkpoints included; curl's token fetched once beforehand); ${rounds} rounds, alternating; per-round ratios ${r.min.toFixed(2)}-${r.max.toFixed(2)} (median ${r.median.toFixed(2)})`);
}

/** A playbook of 50 assemblies with 1 MiB templates: export, and import by replay into the other tenant, each beside a bare loop of the same calls. */
async function benchPlaybooks() {
  const emuData = join(work, 'pb-emu');
  await mkdir(emuData, { recursive: true });
  const emu = await startEmulatorProcess(emuData);
  const client = new FerryClient({ address: emu.address, credentials: emu.credentials });
  const ASSEMBLIES = 50;
  const template = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < template.length; i += 64) template.write(`template block ${i} `, i);
  const pb = (await client.playbooks.create({ name: 'bench playbook', isPrivate: false, organizationWide: true })).objectIdentifier;
  for (let i = 0; i < ASSEMBLIES; i++) {
    const asm = await client.assemblies.create(pb, { name: `Template ${i}`, description: 'bench', type: 'docxFlowWide', file: { open: () => Readable.from([template]), size: template.length, filename: `t${i}.docx` } });
    const ref = randomUUID();
    const cond = randomUUID();
    await client.assemblies.updateRichText(pb, asm.objectIdentifier, { type: 'doc', content: [{ type: 'reference', attrs: { uuid: ref }, content: [{ type: 'condition', attrs: { uuid: cond } }] }] });
    await client.templateColumns.create({ playbookIdentifier: pb, assemblyIdentifier: asm.objectIdentifier, referenceIdentifier: ref }, { name: 'Party' });
    await client.categoryConditions.create({ playbookIdentifier: pb, assemblyIdentifier: asm.objectIdentifier, referenceIdentifier: ref, conditionIdentifier: cond }, { fuzzyMatch: true, text: 'EU' });
  }
  await client.close();
  const worker = new URL('./workers/playbook.mjs', import.meta.url).pathname;
  const side = async (...args) => JSON.parse((await run(process.execPath, [worker, ...args], { maxBuffer: 1 << 20 })).stdout);
  const desc = JSON.stringify(emu);
  const archive = join(work, 'pb.zip');
  const bareExport = await side('export', 'bare', desc, pb, join(work, 'pb-bare'));
  const ferryExport = await side('export', 'ferry', desc, pb, archive);
  const bareImport = await side('import', 'bare', desc, archive, join(work, 'pb-bare-import'));
  const ferryImport = await side('import', 'ferry', desc, archive, join(work, 'pb-import.sqlite'));
  await emu.stop();
  console.error(`playbooks: export ferry ${Math.round(ferryExport.ms)} ms / bare ${Math.round(bareExport.ms)} ms; import ferry ${Math.round(ferryImport.ms)} ms / bare ${Math.round(bareImport.ms)} ms`);
  const note = `${ASSEMBLIES} assemblies x 1 MiB template, a reference, a column and a condition each; emulator in its own process, blobs on disk`;
  record(`playbook export (${ASSEMBLIES} x 1 MiB)`, Math.round(ferryExport.ms), Math.round(bareExport.ms), 'ms', ferryExport.ms / bareExport.ms, undefined, `${note}; bare: the same GET calls, bodies streamed to files; archive ${Math.round(ferryExport.bytes / 1024 / 1024)} MiB`);
  record(`playbook import by replay (${ASSEMBLIES} x 1 MiB)`, Math.round(ferryImport.ms), Math.round(bareImport.ms), 'ms', ferryImport.ms / bareImport.ms, undefined, `${note}; ferry checks the archive whole first; bare: the same create calls from unpacked files, no checks, no id map`);
  record('peak RSS of the playbook export', Math.round(ferryExport.maxRssKiB / MiB), Math.round(bareExport.maxRssKiB / MiB), 'MiB', ferryExport.maxRssKiB / bareExport.maxRssKiB, undefined, 'each side in its own process');
  record('peak RSS of the playbook import', Math.round(ferryImport.maxRssKiB / MiB), Math.round(bareImport.maxRssKiB / MiB), 'MiB', ferryImport.maxRssKiB / bareImport.maxRssKiB, undefined, 'each side in its own process');
}

/**
 * --bwlimit: a mirror and then a pull of 24 MiB (48 files of 512 KiB) under a limit of 4 MiB/s,
 * each beside the same command without the limit, as commands (start-up included). The figure is
 * the rate achieved under the limit over the limit: at most 1 plus what one second of burst and
 * the start-up allow (24 MiB at 4 MiB/s takes at least 5 s: the bucket starts full).
 */
async function benchBwlimit() {
  const emu = await startEmulatorProcess();
  const client = new FerryClient({ address: emu.address, credentials: emu.credentials });
  const root = join(work, 'bwlimit');
  const FILES = 48;
  const SIZE = 512 * 1024;
  for (let i = 0; i < FILES; i++) {
    await mkdir(join(root, `d${i % 4}`), { recursive: true });
    await writeFile(join(root, `d${i % 4}`, `f${i}.bin`), Buffer.alloc(SIZE, i));
  }
  const total = FILES * SIZE;
  const LIMIT = 4 * 1024 * 1024;
  const ferry = new URL('../bin/ferry.js', import.meta.url).pathname;
  const env = ferryEnv(emu, 'bwlimit-state');
  const rateOf = (ms) => total / 1024 / 1024 / (ms / 1000);
  const projects = {};
  const ms = {};
  for (const side of ['free', 'limited']) {
    projects[side] = (await client.projects.create({ name: `bench bwlimit ${side}`, description: 'bench' })).objectIdentifier;
    const limit = side === 'limited' ? ['--bwlimit', String(LIMIT)] : [];
    ms[`mirror ${side}`] = await wallOf([process.execPath, ferry, 'mirror', root, '--project', projects[side], ...limit, '--state', join(work, `bw-m-${side}.sqlite`), '--json'], env);
    ms[`pull ${side}`] = await wallOf([process.execPath, ferry, 'pull', projects[side], join(work, `bw-out-${side}`), ...limit, '--state', join(work, `bw-p-${side}.sqlite`), '--json'], env);
  }
  await client.close();
  await emu.stop();
  for (const kind of ['mirror', 'pull']) {
    const limited = rateOf(ms[`${kind} limited`]);
    const free = rateOf(ms[`${kind} free`]);
    console.error(`bwlimit ${kind}: ${limited.toFixed(2)} MiB/s under a limit of ${LIMIT / 1024 / 1024} MiB/s (${Math.round(ms[`${kind} limited`])} ms); ${free.toFixed(1)} MiB/s without (${Math.round(ms[`${kind} free`])} ms)`);
    record(`${kind} of ${total / 1024 / 1024} MiB under --bwlimit ${LIMIT / 1024 / 1024}M: achieved rate over the limit`, Number(limited.toFixed(2)), Number(free.toFixed(2)), 'MiB/s', limited / (LIMIT / 1024 / 1024), '<= 1.25', `ferry: with --bwlimit; bare: the same command without it; as commands, start-up included; the bucket starts with one second of burst, so a run of ${total / LIMIT} s at the limit shows at most ${(total / LIMIT / (total / LIMIT - 1)).toFixed(2)}`);
  }
}


/**
 * The lease's cost (issue 29): on a warm no-op, the requests it adds (counted on the wire) and the
 * time, beside the same run with --no-lock; on a mirror of 2,000 files, the throughput beside
 * --no-lock. Alternating rounds, medians, each round into a project of its own with a fresh store.
 */
async function benchLease(rounds = 7, files = 2_000) {
  const emu = await startEmulatorProcess();
  const root = join(work, 'lease');
  await makeTree(root, files, 1024);
  const { client, counts } = countingClient(emu);
  const leaseRequests = () => ['POST /projects', 'GET /projects', 'DELETE /projects'].reduce((n, k) => n + [...counts].filter(([key]) => key === k || (k === 'DELETE /projects' && key.startsWith('DELETE /projects/'))).reduce((m, [, v]) => m + v, 0), 0);
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const mirrorMs = { lease: [], off: [] };
  const noopMs = { lease: [], off: [] };
  const noopRequests = { lease: [], off: [] };
  // A first round of each, not counted: the emulator's and this process's warm-up.
  for (const side of ['lease', 'off']) {
    const store = new SqliteCheckpointStore(join(work, `lease-warmup-${side}.sqlite`));
    const project = (await client.projects.create({ name: `lease warm-up ${side}`, description: 'bench' })).objectIdentifier;
    await mirror({ source: root, project, lock: side === 'off' ? { off: true } : {} }, { client, store });
    store.close();
  }
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 ? ['off', 'lease'] : ['lease', 'off']) {
      const store = new SqliteCheckpointStore(join(work, `lease-${side}-${round}.sqlite`));
      // A project of its own: every round meets the same service, not one holding the rounds before.
      const project = (await client.projects.create({ name: `lease ${side} ${round}`, description: 'bench' })).objectIdentifier;
      const opts = { source: root, project, lock: side === 'off' ? { off: true } : {} };
      const full = await timed(() => mirror(opts, { client, store }));
      if (full.result.counts.uploaded !== files) throw new Error(`lease bench: ${JSON.stringify(full.result.counts)}`);
      mirrorMs[side].push(full.ms);
      counts.clear();
      const noop = await timed(() => mirror(opts, { client, store }));
      if (noop.result.counts.uploaded !== 0) throw new Error(`lease bench no-op: ${JSON.stringify(noop.result.counts)}`);
      noopMs[side].push(noop.ms);
      noopRequests[side].push(leaseRequests());
      store.close();
    }
    console.error(`lease round ${round + 1}: mirror ${Math.round(mirrorMs.lease[round])} ms with the lease, ${Math.round(mirrorMs.off[round])} ms without; no-op ${Math.round(noopMs.lease[round])} / ${Math.round(noopMs.off[round])} ms, lease requests ${noopRequests.lease[round]} / ${noopRequests.off[round]}`);
  }
  await client.close();
  await emu.stop();
  const added = median(noopRequests.lease) - median(noopRequests.off);
  record('lease: requests it adds to a warm no-op mirror', added, 0, 'requests', added, '<= 3', `POST, GET and DELETE /projects counted on the wire, with the lease against --no-lock (per round ${noopRequests.lease.join('/')} against ${noopRequests.off.join('/')})`);
  record('lease: warm no-op mirror, time with the lease over --no-lock', Math.round(median(noopMs.lease)), Math.round(median(noopMs.off)), 'ms', median(noopMs.lease) / median(noopMs.off), undefined, `informational: medians of ${rounds} (with ${noopMs.lease.map(Math.round).join('/')} ms, without ${noopMs.off.map(Math.round).join('/')} ms)`);
  // The median of the per-round ratios: rounds side by side share the machine's state of the moment.
  const perRound = mirrorMs.off.map((off, i) => off / mirrorMs.lease[i]);
  const ratio = median(perRound);
  record(`lease: mirror of ${files} files, throughput with the lease over --no-lock`, Math.round(median(mirrorMs.lease)), Math.round(median(mirrorMs.off)), 'ms', ratio, '>= 0.97', `median of the per-round ratios of ${rounds} alternating rounds (after one warm-up round each), each into a project of its own with a fresh store (per round ${perRound.map((r) => r.toFixed(2)).join(', ')}; ms with ${mirrorMs.lease.map(Math.round).join('/')}, without ${mirrorMs.off.map(Math.round).join('/')})`);
}

/**
 * What a listing-lag bound costs a run (issue 44): the same runs, alternated, with the bound at 0
 * and at 5 s, against an emulator that lists at once (so the cost is the bound's waits alone): a
 * warm no-op (the claim's commit wait), a cold no-op of a full project from a fresh store (the
 * same), and a first mirror (the commit wait and, having written, the wait before the release).
 * Requests are counted on the wire: the bound adds none to a run that finds the lease free.
 */
async function benchLag(rounds = 5, files = 2_000, boundMs = 5_000) {
  const emu = await startEmulatorProcess();
  const root = join(work, 'lag');
  await makeTree(root, files, 1024);
  const sides = { 0: countingClient(emu), [boundMs]: countingClient(emu, { listingLagMs: boundMs }) };
  const runs = ['warm no-op', 'cold no-op', 'first mirror'];
  const ms = Object.fromEntries(runs.map((r) => [r, { 0: [], [boundMs]: [] }]));
  const requests = Object.fromEntries(runs.map((r) => [r, { 0: [], [boundMs]: [] }]));
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  for (let round = 0; round <= rounds; round++) {
    for (const bound of round % 2 ? [boundMs, 0] : [0, boundMs]) {
      const { client, counts } = sides[bound];
      const project = (await client.projects.create({ name: `lag ${bound} ${round}`, description: 'bench' })).objectIdentifier;
      const opts = { source: root, project };
      const measure = async (name, store) => {
        counts.clear();
        const t = await timed(() => mirror(opts, { client, store }));
        // Round 0 warms up the emulator and this process: not counted.
        if (round === 0) return t.result;
        ms[name][bound].push(t.ms);
        requests[name][bound].push([...counts.values()].reduce((a, b) => a + b, 0));
        return t.result;
      };
      const store = new SqliteCheckpointStore(join(work, `lag-${bound}-${round}.sqlite`));
      const first = await measure('first mirror', store);
      if (first.counts.uploaded !== files) throw new Error(`lag bench: ${JSON.stringify(first.counts)}`);
      if ((await measure('warm no-op', store)).counts.uploaded !== 0) throw new Error('lag bench: the warm no-op uploaded');
      store.close();
      const fresh = new SqliteCheckpointStore(join(work, `lag-${bound}-${round}-cold.sqlite`));
      if ((await measure('cold no-op', fresh)).counts.uploaded !== 0) throw new Error('lag bench: the cold no-op uploaded');
      fresh.close();
    }
    if (round > 0) console.error(`lag round ${round}: ${runs.map((r) => `${r} ${Math.round(ms[r][0][round - 1])} / ${Math.round(ms[r][boundMs][round - 1])} ms`).join(', ')} (bound 0 / ${boundMs / 1000} s)`);
  }
  await Promise.all(Object.values(sides).map((s) => s.client.close()));
  await emu.stop();
  for (const r of runs) {
    const at0 = median(ms[r][0]);
    const atBound = median(ms[r][boundMs]);
    record(`listing lag: ${r} of ${files} files, time with a bound of ${boundMs / 1000} s over a bound of 0`, Math.round(atBound), Math.round(at0), 'ms', atBound / at0, undefined, `informational: medians of ${rounds} alternated rounds after a warm-up (bound ${boundMs / 1000} s: ${ms[r][boundMs].map(Math.round).join('/')} ms; bound 0: ${ms[r][0].map(Math.round).join('/')} ms); the bound's cost is ${Math.round(atBound - at0)} ms`);
    const reqAt0 = median(requests[r][0]);
    const reqAtBound = median(requests[r][boundMs]);
    // A run that wrote makes one more beat before its release's wait (create, list, remove) and
    // looks once more after it: up to 4 requests; a no-op none.
    const allowed = r === 'first mirror' ? 4 : 0;
    record(`listing lag: ${r}, requests a bound of ${boundMs / 1000} s adds`, reqAtBound, reqAt0, 'requests', reqAtBound - reqAt0, `<= ${allowed}`, `counted on the wire, medians of ${rounds}; the ratio column is the difference (bound: ${requests[r][boundMs].join('/')}; 0: ${requests[r][0].join('/')})`);
  }
}

/**
 * The emulator's page of a project's documents, at page 1 and at the last page, as the project
 * grows (issue 31: a page must cost the same at page 1 and page 10,000). The bare side: the same
 * rows read by a plain indexed SELECT of the seq range, no count, no join, what a page cannot cost
 * less than. Documents are inserted straight into the emulator's table (uploading them would only
 * slow the bench). Per-item cost of a whole listing in pages of 1,000, largest over smallest.
 */
async function benchEmulatorPages(sizes = [10_000, 100_000, 1_000_000]) {
  const { openDatabase } = await import('../dist/src/emulator/state/database.js');
  const { createStores } = await import('../dist/src/emulator/state/index.js');
  const db = openDatabase();
  const stores = createStores(db);
  const insert = db.prepare(`INSERT INTO documents (object_identifier, tenant, project_identifier, parent_identifier, name, is_directory, upload_identifier, size, date_added, seq, upload_in_progress, file_type, ocr_strategy, ocr_engine, coordinate_extraction_strategy, source, owner_id, owner_name, owner_email, processing_pending)
    VALUES (?, 't', 'p', NULL, ?, 0, 'u', 1, ?, ?, 0, 'text', 'never', 'engineA', 'never', 'local', 'o', 'o', 'o', 0)`);
  const bare = db.prepare('SELECT * FROM documents WHERE seq > ? ORDER BY seq LIMIT 1000');
  let n = 0;
  const grow = db.transaction((to) => {
    for (; n < to; n++) insert.run(`id-${n}`, `f${n}.txt`, new Date(1_700_000_000_000 + n).toISOString(), n + 1);
  });
  const ms = (fn, times = 5) => {
    const t = process.hrtime.bigint();
    for (let i = 0; i < times; i++) fn();
    return Number(process.hrtime.bigint() - t) / (times * 1e6);
  };
  const page = (offset) => stores.documents.list({ tenant: 't', projectIdentifier: 'p', flatten: true, parentIdentifier: null, sortExpression: 'd.date_added', desc: true, limit: 1000, offset });
  const rows = [];
  for (const size of sizes) {
    grow(size);
    // A whole listing walked page after page, as a client reads it: the first page's time, the
    // last page's, and the mean per document.
    const times = [];
    let seen = 0;
    // The first size is walked once before it is measured (the JIT's warm-up, not the emulator's cost).
    if (size === sizes[0]) for (let offset = 0; offset < size; offset += 1000) page(offset);
    const walked = ms(() => {
      times.length = 0;
      seen = 0;
      for (let offset = 0; offset < size; offset += 1000) {
        const t = process.hrtime.bigint();
        seen += page(offset).items.length;
        times.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
    }, 1);
    if (seen !== size) throw new Error(`pages bench: the walk read ${seen} of ${size}`);
    const first = times[0];
    const last = times[times.length - 1];
    const bareWalk = ms(() => {
      for (let after = 0; after < size; after += 1000) bare.all(after);
    }, 1);
    rows.push({ size, first, last, perItem: walked / size, barePerItem: bareWalk / size });
    console.error(`emulator pages: ${size} documents walked: page 1 ${first.toFixed(1)} ms, last page ${last.toFixed(1)} ms, ${(walked / size * 1000).toFixed(1)} µs a document (bare ${(bareWalk / size * 1000).toFixed(1)} µs)`);
  }
  db.close();
  const small = rows[0];
  const large = rows[rows.length - 1];
  const detail = rows.map((r) => `${r.size}: page 1 ${r.first.toFixed(1)} ms, last ${r.last.toFixed(1)} ms, ${(r.perItem * 1000).toFixed(1)} µs a document (bare ${(r.barePerItem * 1000).toFixed(1)} µs)`).join('; ');
  record(`emulator: a page of 1,000 of a project's documents walked page by page, last page over page 1, at ${large.size} documents`, Number(large.last.toFixed(1)), Number(large.first.toFixed(1)), 'ms', large.last / large.first, '<= 1.2', detail);
  record(`emulator: a whole listing walked page by page, time per document at ${large.size} over ${small.size}`, Number((large.perItem * 1000).toFixed(1)), Number((small.perItem * 1000).toFixed(1)), 'µs', large.perItem / small.perItem, '<= 1.2', `bare: a plain SELECT of each seq range, no count, no join (${detail})`);
}

// `--only noop,bigfile` runs a subset (names: startup, emulator, throughput, xargs, noop, coldstart, incremental, bigfile, verify, discovery, archives, manifest, scan, playbooks, pull, copies (only when named: it mounts an NTFS image), ratelimit, faults, bwlimit, migrate, lease, lag, pages, control).
const onlyArg = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
const wanted = (name) => !onlyArg || onlyArg.split(',').includes(name);
try {
  if (wanted('startup')) await benchStartup();
  if (wanted('emulator')) await benchEmulator();
  if (wanted('throughput')) await benchThroughput();
  if (wanted('xargs')) await benchXargs();
  if (wanted('noop')) await benchNoop(100_000);
  if (wanted('coldstart')) {
    await benchColdStart(10_000);
    if (await canPin('the pinned cold start')) await benchColdStart(10_000, true);
  }
  if (wanted('incremental')) await benchIncremental(10_000, 100);
  if (wanted('bigfile')) await (await import('./bigfile.mjs')).benchBigFile({ work, record, results });
  if (wanted('verify')) await (await import('./verify.mjs')).benchVerify({ work, record, results });
  if (wanted('discovery')) await benchDiscovery(large ? 1_000_000 : 200_000);
  if (wanted('archives')) await benchArchives(large ? 1_000_000 : 200_000);
  if (wanted('manifest')) await benchManifest(large ? 1_000_000 : 200_000);
  if (wanted('scan')) await benchScan();
  if (wanted('playbooks')) await benchPlaybooks();
  if (wanted('pull')) await benchPull();
  if (onlyArg && wanted('copies')) await benchCopies();
  if (wanted('ratelimit')) await benchRateLimit();
  if (wanted('faults')) await benchFaults();
  if (wanted('bwlimit')) await benchBwlimit();
  if (wanted('migrate')) await benchMigrate();
  if (wanted('lease')) await benchLease();
  if (wanted('lag')) await benchLag();
  if (wanted('pages')) await benchEmulatorPages();
  if (wanted('control')) await (await import('./control.mjs')).benchControl({ work, record, results });
} finally {
  await rm(work, { recursive: true, force: true });
}

const rows = results.benches.map((b) => [b.name, `${b.ferry} ${b.unit}`, `${b.bare} ${b.unit}`, b.ratio.toFixed(3), b.target ? `${b.target} ${b.met ? 'met' : 'MISSED'}` : '(information)']);
const header = ['benchmark', 'ferry', 'bare / budget', 'ratio', 'target'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
console.log(line(header));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const r of rows) console.log(line(r));
// A full run writes latest.json; a subset writes its own file, so it never hides the full one.
const out = new URL(`./results/${onlyArg ? `latest-${onlyArg.replace(/,/g, '-')}${large ? '-large' : ''}` : `latest${large ? '-large' : ''}`}.json`, import.meta.url);
await mkdir(new URL('./results/', import.meta.url), { recursive: true });
await writeFile(out, `${JSON.stringify(results, null, 2)}\n`);
console.log(`\nresults written to ${out.pathname}`);
