// Big files at the wire's speed (issue 63), `npm run bench -- --only=bigfile`: whole processes on
// one emulator process keeping its blobs on disk, each side beside curl in the same run, the side
// that goes first alternating round by round; a ratio is the median of the rounds' ratios, with
// their spread.
//
//   one file of 1.5 GiB (random bytes): `ferry pull` beside `curl -o` and a bare undici pipe;
//     `ferry mirror` beside `curl -F`, with the emulator's receiving rate (curl's) beside a plain
//     `cp` of the file on the same disk; ferry's peak RSS both ways
//   100 files of 20 MiB: `ferry pull` and `ferry mirror` (default concurrency) beside curl run 8 at
//     a time (`xargs -P8`)
//
// Uploads go to a fresh emulator each round (the service keeps every document: ten rounds of
// 1.5 GiB would otherwise fill the disk); pulls go to a fresh folder and a fresh state directory.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FerryClient } from '../dist/src/index.js';
import { canPin, startEmulatorProcess } from './lib.mjs';
import { emulatorEnv, ferryEnv, runFerry } from './ferry-process.mjs';

const run = promisify(execFile);
const MiB = 1024 * 1024;
const bareGet = new URL('./workers/bare-get.mjs', import.meta.url).pathname;
/** What the emulator's own profiles say (`ferry emulator --write-profiles`, `ferry doctor --probe`): it reads form fields after the file, so a large file is hashed as it is sent. */
const FORM_ORDER = { FERRY_FORM_ORDER: 'any' };

function spread(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)], min: sorted[0], max: sorted[sorted.length - 1], runs: sorted.length };
}

async function timedProcess(file, args, env = {}) {
  const start = process.hrtime.bigint();
  await run(file, args, { env: { ...process.env, ...env }, maxBuffer: 1 << 22 }).catch((err) => {
    throw new Error(`${file} ${args.join(' ')} failed: ${err.stderr || err.message}`);
  });
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** The same, with the process's CPU time (user and system, ms) as /usr/bin/time reads it. */
async function timedWithCpu(file, args, env = {}, cpuFile) {
  const ms = await timedProcess('/usr/bin/time', ['-f', '%U %S', '-o', cpuFile, file, ...args], env);
  const [user, system] = (await readFile(cpuFile, 'utf8')).trim().split('\n').pop().split(' ').map(Number);
  return { ms, cpuMs: (user + system) * 1000 };
}

async function bearerOf(emu, tls) {
  if (tls) {
    // Node's fetch cannot be told to trust the emulator's own certificate once this process runs: curl can.
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: emu.credentials.clientId, client_secret: emu.credentials.clientSecret, audience: emu.audience }).toString();
    return JSON.parse((await run('curl', ['-sS', '-f', '--cacert', tls.cert, '-d', body, `${emu.authUrl}/oauth/token`])).stdout).access_token;
  }
  const res = await fetch(`${emu.authUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: emu.credentials.clientId, client_secret: emu.credentials.clientSecret, audience: emu.audience }).toString(),
  });
  return (await res.json()).access_token;
}

/** The machine and the disk the bench ran on, as the results say them. */
async function machineOf(work) {
  const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
  const fs = (await run('findmnt', ['-n', '-o', 'FSTYPE', '-T', work])).stdout.trim();
  const source = (await run('df', ['--output=source', work])).stdout.trim().split('\n').pop();
  const dev = source?.replace(/^\/dev\//, '').replace(/[0-9]+$/, '');
  let rotational = 'unknown';
  try {
    rotational = readFileSync(`/sys/block/${dev}/queue/rotational`, 'utf8').trim() === '1' ? 'the kernel says rotational' : 'the kernel says non-rotational';
  } catch {
    // A device without a queue of its own (an overlay, a partition's parent unknown): said unknown.
  }
  return `${cpus().length} x ${cpu}; ${fs} on ${source} (${rotational})`;
}

/** A fresh emulator process on disk, its client, and a project in it; `stop` removes its data. Over https with `tls` ({ cert, key }). */
async function emulatorWithProject(work, name, tls) {
  const data = join(work, `${name}-emulator`);
  await rm(data, { recursive: true, force: true });
  await mkdir(data, { recursive: true });
  const emu = await startEmulatorProcess(data, tls ? { BENCH_TLS: `${tls.cert},${tls.key}` } : {});
  const client = new FerryClient({ address: emu.address, credentials: emu.credentials, ...(tls ? { ca: readFileSync(tls.cert) } : {}) });
  const project = async (label) => (await client.projects.create({ name: label, description: 'bench bigfile' })).objectIdentifier;
  return {
    emu,
    client,
    project,
    tls,
    bearer: await bearerOf(emu, tls),
    async stop() {
      await client.close();
      await emu.stop();
      await rm(data, { recursive: true, force: true });
    },
  };
}

/** `curl -F` sending the file to a new document of `project` on the emulator `e`, its arguments. */
function curlUpload(e, project, file) {
  return ['-sS', '-f', ...trusting(e), '-o', '/dev/null', '-H', `authorization: Bearer ${e.bearer}`, '-F', `file=@${file}`, `${e.emu.baseUrl}/projects/${project}/documents?documentUploadIdentifier=${randomUUID()}`];
}

/** curl's flag trusting the emulator's certificate, when it serves https. */
const trusting = (e) => (e.tls ? ['--cacert', e.tls.cert] : []);

/** ferry's environment toward the emulator `e`: its certificate trusted as users trust one (NODE_EXTRA_CA_CERTS). */
const towards = (e) => ({ ...emulatorEnv(e.emu), ...(e.tls ? { NODE_EXTRA_CA_CERTS: e.tls.cert } : {}) });

/** `ferry mirror` of `src` into `project` on the emulator `e`, which must upload one file. */
async function ferryMirrorOne(work, e, src, project, stateDir) {
  const r = await runFerry(work, 'mirror', ['mirror', src, '--project', project], { ...ferryEnv(work, stateDir), ...towards(e), ...FORM_ORDER });
  if (r.code !== 0 || r.json?.counts?.uploaded !== 1) throw new Error(`bigfile mirror (${stateDir}): exit ${r.code}, ${JSON.stringify(r.json?.counts)}`);
  return r;
}

async function documentsOf(client, project) {
  const docs = [];
  for await (const d of client.documents.list(project, { flattenList: true })) if (!d.isDirectory) docs.push(d);
  return docs;
}

/** Each side run once a round, the first side alternating; per side its times (and ferry's peak RSS). */
async function alternate(rounds, sides) {
  const names = Object.keys(sides);
  const ms = Object.fromEntries(names.map((n) => [n, []]));
  const cpu = Object.fromEntries(names.map((n) => [n, []]));
  const rss = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      const r = await sides[name](round);
      ms[name].push(r.ms);
      if (r.cpuMs !== undefined) cpu[name].push(r.cpuMs);
      if (r.rssKiB) rss.push(r.rssKiB);
    }
    // With each side's CPU time: ferry's slow pull rounds (right after the undici pipe's) were slow in its own process.
    console.error(`bigfile round ${round + 1}: ${names.map((n) => `${n} ${Math.round(ms[n][round])} ms${cpu[n][round] !== undefined ? ` (CPU ${Math.round(cpu[n][round])} ms)` : ''}`).join(', ')}`);
  }
  return { ms, cpu, rss };
}

/**
 * The page cache's dirty pages written out before a timed side: the kernel slows a writer once
 * dirty pages pass its threshold (a fifth of memory here), so a side that ran after another's
 * 1.5 GiB paid the disk for the other's bytes (one side's rounds measured 1.4 s or 4-5 s by
 * whether it went first).
 */
async function settleDisk() {
  await run('sync', []);
}

/** `fn` run with the emulator on the last core and this process (and what it starts) on the others. */
async function pinnedTo(emulatorPid, fn) {
  const last = cpus().length - 1;
  await run('taskset', ['-a', '-p', '-c', String(last), String(emulatorPid)]);
  await run('taskset', ['-a', '-p', '-c', last > 1 ? `0-${last - 1}` : '0', String(process.pid)]);
  try {
    return await fn();
  } finally {
    await run('taskset', ['-a', '-p', '-c', `0-${last}`, String(process.pid)]);
    await run('taskset', ['-a', '-p', '-c', `0-${last}`, String(emulatorPid)]);
  }
}

function ratios(base, ferry) {
  return spread(base.map((b, i) => b / ferry[i]));
}

export async function benchBigFile({ work, record, results, rounds = 5, sizeMiB = 1536, files = 100, fileMiB = 20 }) {
  const machine = await machineOf(work);
  results.spreads ??= {};
  const src = join(work, 'bigfile-src');
  await mkdir(src, { recursive: true });
  const big = join(src, 'big.bin');
  await run('dd', ['if=/dev/urandom', `of=${big}`, 'bs=1M', `count=${sizeMiB}`], { maxBuffer: 1 << 20 });
  const size = sizeMiB * MiB;
  const label = sizeMiB % 1024 === 0 ? `${sizeMiB / 1024} GiB` : `${(sizeMiB / 1024).toFixed(1)} GiB`;

  // Pull: one emulator holding the file, uploaded once.
  const held = await emulatorWithProject(work, 'bigfile-pull');
  try {
    const project = await held.project('held');
    await timedProcess('curl', curlUpload(held, project, big));
    const [doc] = await documentsOf(held.client, project);
    const out = join(work, 'bigfile-out');
    const fresh = async () => {
      await rm(out, { recursive: true, force: true });
      await mkdir(out, { recursive: true });
      await settleDisk();
    };
    const cpuFile = join(work, 'bigfile-cpu');
    const pullRounds = (tag) =>
      alternate(rounds, {
        curl: async () => {
          await fresh();
          return timedWithCpu('curl', ['-sS', '-f', '-o', join(out, 'big.bin'), '-H', `authorization: Bearer ${held.bearer}`, doc.url], {}, cpuFile);
        },
        undici: async () => {
          await fresh();
          return timedWithCpu(process.execPath, [bareGet, held.bearer, doc.url, join(out, 'big.bin')], {}, cpuFile);
        },
        ferry: async (round) => {
          await fresh();
          const r = await runFerry(work, 'pull', ['pull', project, join(out, 'copy')], { ...ferryEnv(work, `bigfile-pull-state-${tag}-${round}`), ...emulatorEnv(held.emu) });
          if (r.code !== 0 || r.json?.counts?.downloaded !== 1) throw new Error(`bigfile pull: exit ${r.code}, ${JSON.stringify(r.json?.counts)}`);
          return r;
        },
      });
    const mbps = (t) => Math.round(size / 1e6 / (spread(t).median / 1000));
    // Pinned: the emulator on a core of its own, every client on the other, as when the service
    // runs elsewhere; the ratio the target is read from, where the machine allows it. Pinned or
    // not, ferry's rounds were 1.3-1.5 s or 3.9-6.0 s here, the slow ones those run right after
    // the undici pipe's (its CPU time tripled then; curl's after the same pipe did not): see
    // bench/NOTES.md, *Big files*.
    const pinnable = await canPin('the pinned big-file pull');
    let pinnedRatio;
    if (pinnable) {
      const p = await pinnedTo(held.emu.pid, () => pullRounds('pinned'));
      pinnedRatio = ratios(p.ms.curl, p.ms.ferry);
      const pu = ratios(p.ms.undici, p.ms.ferry);
      results.spreads['bigfile pull pinned'] = { curl: pinnedRatio, undici: pu };
      record(`pull one ${label} file, ferry beside curl -o, each on a core of its own (taskset)`, mbps(p.ms.ferry), mbps(p.ms.curl), 'MB/s', pinnedRatio.median, '>= 0.9', `${rounds} rounds alternating; the emulator on one core, each client on the other; per-round ratios ${pinnedRatio.min.toFixed(2)}-${pinnedRatio.max.toFixed(2)}; beside the bare undici pipe ${pu.median.toFixed(2)}; ${machine}`);
    }
    const { ms, cpu, rss } = await pullRounds('free');
    await rm(out, { recursive: true, force: true });
    const vsCurl = ratios(ms.curl, ms.ferry);
    const vsUndici = ratios(ms.undici, ms.ferry);
    results.spreads['bigfile pull'] = { curl: vsCurl, undici: vsUndici };
    record(`pull one ${label} file, ferry beside curl -o`, mbps(ms.ferry), mbps(ms.curl), 'MB/s', vsCurl.median, pinnable ? undefined : '>= 0.9', `${rounds} rounds alternating, unpinned${pinnable ? ' (information: the target is read pinned, above)' : ''}; per-round ratios ${vsCurl.min.toFixed(2)}-${vsCurl.max.toFixed(2)}; ${machine}`);
    record(`pull one ${label} file, ferry beside a bare undici pipe`, mbps(ms.ferry), mbps(ms.undici), 'MB/s', vsUndici.median, undefined, `unpinned; per-round ratios ${vsUndici.min.toFixed(2)}-${vsUndici.max.toFixed(2)}`);
    const cpuOf = (side) => spread(cpu[side]);
    results.spreads['bigfile pull cpu'] = { ferry: cpuOf('ferry'), curl: cpuOf('curl'), undici: cpuOf('undici') };
    record(`CPU time pulling one ${label} file, ferry beside curl -o`, Math.round(cpuOf('ferry').median), Math.round(cpuOf('curl').median), 'ms', cpuOf('ferry').median / cpuOf('curl').median, undefined, `unpinned; user and system time of the whole process, medians of ${rounds}; ferry ${Math.round(cpuOf('ferry').min)}-${Math.round(cpuOf('ferry').max)} ms (start-up and exit included), curl ${Math.round(cpuOf('curl').min)}-${Math.round(cpuOf('curl').max)} ms, the undici pipe ${Math.round(cpuOf('undici').median)} ms`);
    const peak = Math.max(...rss) / 1024;
    record(`peak RSS pulling one ${label} file`, Math.round(peak), 200, 'MiB', peak / 200, '<= 1', `the highest of ${rss.length} pulls; ratio = peak / the 200 MiB budget`);
  } finally {
    await held.stop();
  }

  // Mirror: a fresh emulator for each side of each round.
  const copy = join(work, 'bigfile-copy.bin');
  const cpMs = [];
  const mirrorRss = [];
  const up = { curl: [], hashed: [], ferry: [] };
  const upCpu = { curl: [], ferry: [] };
  /** The emulator's CPU time (ms) receiving each side's upload: what its receiving cost, whoever sent. */
  const receiving = { curl: [], hashed: [], ferry: [] };
  const pinnedReceiving = { curl: [], ferry: [] };
  const upCpuFile = join(work, 'bigfile-up-cpu');
  for (let round = 0; round < rounds; round++) {
    const sides = {
      curl: async (e, project) => {
        const r = await timedWithCpu('curl', curlUpload(e, project, big), {}, upCpuFile);
        upCpu.curl.push(r.cpuMs);
        return r.ms;
      },
      // What a script of curl must do to send what ferry sends: the content's sha256 with it, read
      // first (openssl's digest: coreutils' sha256sum took three times as long here).
      hashed: async (e, project) => {
        const script = 'h=$(openssl dgst -sha256 -r "$1" | cut -d" " -f1) && curl -sS -f -o /dev/null -H "authorization: Bearer $2" -F "file=@$1" -F "metadataJson={\\"ferry.sha256\\":\\"$h\\"}" "$3"';
        return timedProcess('/bin/sh', ['-c', script, 'sh', big, e.bearer, `${e.emu.baseUrl}/projects/${project}/documents?documentUploadIdentifier=${randomUUID()}`]);
      },
      ferry: async (e, project) => {
        const r = await ferryMirrorOne(work, e, src, project, `bigfile-mirror-state-${round}`);
        mirrorRss.push(r.rssKiB);
        upCpu.ferry.push(r.cpuMs);
        return r.ms;
      },
    };
    for (const name of round % 2 === 0 ? ['curl', 'hashed', 'ferry'] : ['ferry', 'hashed', 'curl']) {
      // Each side on an emulator of its own, as pinned below.
      const e = await emulatorWithProject(work, 'bigfile-mirror');
      try {
        const project = await e.project(`${name} ${round}`);
        await settleDisk();
        const before = e.emu.cpuMs();
        up[name].push(await sides[name](e, project));
        receiving[name].push(e.emu.cpuMs() - before);
      } finally {
        await e.stop();
      }
    }
    // The same bytes copied on the same disk, as a plain program does it.
    cpMs.push(await timedProcess('cp', [big, copy]));
    await rm(copy, { force: true });
    console.error(`bigfile mirror round ${round + 1}: curl -F ${Math.round(up.curl[round])} ms, openssl dgst and curl -F ${Math.round(up.hashed[round])} ms, ferry ${Math.round(up.ferry[round])} ms, cp ${Math.round(cpMs[round])} ms`);
  }
  // Pinned, as the pull: the emulator on a core of its own, as when the service runs elsewhere.
  // Unpinned, the emulator's receiving (1.8-4.6 s of its CPU per 1.5 GiB here, curl's or ferry's
  // alike) and ferry's sha256 share two cores, and ferry's rounds wait on both.
  const pinnedUp = { curl: [], ferry: [] };
  /** ferry's rounds less its start-up (to its first connection): the transfer a longer file would be all of. */
  const pinnedAfterStartup = [];
  const mirrorPinnable = await canPin('the pinned big-file mirror');
  if (mirrorPinnable) {
    for (let round = 0; round < rounds; round++) {
      for (const name of round % 2 === 0 ? ['curl', 'ferry'] : ['ferry', 'curl']) {
        // An emulator of its own for each side: on one shared by both, the side that went second
        // took 1.3-2 s longer whichever it was (ratio 0.54 against 0.86 by hand with one each).
        const e = await emulatorWithProject(work, 'bigfile-mirror-pinned');
        try {
          const project = await e.project(`${name} pinned ${round}`);
          await settleDisk();
          const before = e.emu.cpuMs();
          const r = await pinnedTo(e.emu.pid, async () => (name === 'curl' ? timedWithCpu('curl', curlUpload(e, project, big), {}, upCpuFile) : ferryMirrorOne(work, e, src, project, `bigfile-mirror-pinned-state-${round}`)));
          pinnedReceiving[name].push(e.emu.cpuMs() - before);
          pinnedUp[name].push(r.ms);
          if (name === 'ferry') pinnedAfterStartup.push(r.ms - r.startupMs);
        } finally {
          await e.stop();
        }
      }
      console.error(`bigfile pinned mirror round ${round + 1}: curl -F ${Math.round(pinnedUp.curl[round])} ms (the emulator's CPU ${Math.round(pinnedReceiving.curl[round])} ms), ferry ${Math.round(pinnedUp.ferry[round])} ms (${Math.round(pinnedReceiving.ferry[round])} ms)`);
    }
  }
  /**
   * The emulator's CPU time receiving each side's upload, beside that side's wall time: the
   * emulator's own rate varied from round to round (fresh processes, a shared host), and where it
   * set the pace, a ratio of wall times carries its noise; the same CPU for either side says the
   * senders cost it the same.
   */
  const recordReceiving = (how, cpu, wall) => {
    const c = spread(cpu.ferry);
    const k = spread(cpu.curl);
    results.spreads[`bigfile mirror receiving ${how}`] = { ferry: c, curl: k };
    const share = (side) => spread(cpu[side].map((ms, i) => ms / wall[side][i]));
    record(`the emulator's CPU receiving one ${label} file, ferry's upload beside curl -F's (${how})`, Math.round(c.median), Math.round(k.median), 'ms', c.median / k.median, undefined, `information: medians of ${cpu.ferry.length}; ferry's ${Math.round(c.min)}-${Math.round(c.max)} ms, curl's ${Math.round(k.min)}-${Math.round(k.max)} ms; busy ${Math.round(share('ferry').median * 100)}% of ferry's rounds and ${Math.round(share('curl').median * 100)}% of curl's`);
  };
  const upRatio = ratios(up.curl, up.ferry);
  const hashedRatio = ratios(up.hashed, up.ferry);
  results.spreads['bigfile mirror'] = { curl: upRatio, hashed: hashedRatio, cp: spread(cpMs) };
  const rate = (t) => Math.round(size / 1e6 / (spread(t).median / 1000));
  if (mirrorPinnable) {
    const pinnedRatio = ratios(pinnedUp.curl, pinnedUp.ferry);
    results.spreads['bigfile mirror pinned'] = { curl: pinnedRatio };
    const afterStartup = ratios(pinnedUp.curl, pinnedAfterStartup);
    const startup = spread(pinnedUp.ferry.map((ms, i) => ms - pinnedAfterStartup[i]));
    results.spreads['bigfile mirror pinned after start-up'] = { curl: afterStartup, startupMs: startup };
    record(`mirror one ${label} file, ferry from its first connection beside curl -F, each on a core of its own`, rate(pinnedAfterStartup), rate(pinnedUp.curl), 'MB/s', afterStartup.median, undefined, `information: the same rounds less ferry's start-up (process start to its first connection: Node, its modules, the store), ${Math.round(startup.median)} ms (${Math.round(startup.min)}-${Math.round(startup.max)}); per-round ratios ${afterStartup.min.toFixed(2)}-${afterStartup.max.toFixed(2)}`);
    record(`mirror one ${label} file, ferry beside curl -F, each on a core of its own (taskset)`, rate(pinnedUp.ferry), rate(pinnedUp.curl), 'MB/s', pinnedRatio.median, '>= 0.9', `${rounds} rounds alternating; a fresh emulator for each side of each round on one core, the client on the other; per-round ratios ${pinnedRatio.min.toFixed(2)}-${pinnedRatio.max.toFixed(2)}; formOrder any`);
    recordReceiving('pinned', pinnedReceiving, pinnedUp);
  }
  recordReceiving('unpinned', receiving, up);
  record(`mirror one ${label} file, ferry beside curl -F`, rate(up.ferry), rate(up.curl), 'MB/s', upRatio.median, mirrorPinnable ? undefined : '>= 0.9', `${rounds} rounds alternating, unpinned${mirrorPinnable ? ' (information: the target is read pinned, above)' : ''}; per-round ratios ${upRatio.min.toFixed(2)}-${upRatio.max.toFixed(2)}; formOrder any (a file of 8 MiB or more hashed as it is sent); the emulator received at ${rate(up.curl)} MB/s (curl's rate), where cp copies the file on the same disk at ${rate(cpMs)} MB/s`);
  record(`mirror one ${label} file, ferry beside openssl dgst -sha256 then curl -F with the hash`, rate(up.ferry), rate(up.hashed), 'MB/s', hashedRatio.median, undefined, `the same work as ferry's (the content's sha256 sent with it, as ferry.sha256); per-round ratios ${hashedRatio.min.toFixed(2)}-${hashedRatio.max.toFixed(2)}`);
  const ferryUpCpu = spread(upCpu.ferry);
  const curlUpCpu = spread(upCpu.curl);
  results.spreads['bigfile mirror cpu'] = { ferry: ferryUpCpu, curl: curlUpCpu };
  record(`CPU time mirroring one ${label} file, ferry beside curl -F`, Math.round(ferryUpCpu.median), Math.round(curlUpCpu.median), 'ms', ferryUpCpu.median / curlUpCpu.median, undefined, `user and system time of the whole process, medians of ${rounds}; ferry ${Math.round(ferryUpCpu.min)}-${Math.round(ferryUpCpu.max)} ms (the content's sha256, start-up and exit included), curl ${Math.round(curlUpCpu.min)}-${Math.round(curlUpCpu.max)} ms`);
  const upPeak = Math.max(...mirrorRss) / 1024;
  record(`peak RSS mirroring one ${label} file`, Math.round(upPeak), 200, 'MiB', upPeak / 200, '<= 1', `the highest of ${mirrorRss.length} mirrors; ratio = peak / the 200 MiB budget`);
  if (mirrorPinnable) await overHttps({ work, record, results, rounds, src, big, label, size });
  await rm(src, { recursive: true, force: true });

  // Many: 100 files of 20 MiB each way, beside curl 8 at a time.
  const many = join(work, 'bigfile-many');
  await mkdir(many, { recursive: true });
  for (let i = 0; i < files; i++) await run('dd', ['if=/dev/urandom', `of=${join(many, `part-${String(i).padStart(3, '0')}.bin`)}`, `bs=1M`, `count=${fileMiB}`]);
  const manyBytes = files * fileMiB * MiB;
  const manyRate = (t) => Math.round(manyBytes / 1e6 / (spread(t).median / 1000));
  const manyUp = { curl: [], ferry: [] };
  const manyDown = { curl: [], ferry: [] };
  for (let round = 0; round < rounds; round++) {
    const e = await emulatorWithProject(work, 'bigfile-many');
    try {
      const curlProject = await e.project(`curl ${round}`);
      const ferryProject = await e.project(`ferry ${round}`);
      const script = `find "$1" -type f -print0 | xargs -0 -P 8 -I{} curl -sS -f -o /dev/null -H "authorization: Bearer $2" -F "file=@{}" "$3"`;
      const upSides = {
        curl: () => timedProcess('/bin/sh', ['-c', script, 'sh', many, e.bearer, `${e.emu.baseUrl}/projects/${curlProject}/documents?documentUploadIdentifier=${randomUUID()}`]),
        ferry: async () => {
          const r = await runFerry(work, 'mirror', ['mirror', many, '--project', ferryProject], { ...ferryEnv(work, `bigfile-many-state-${round}`), ...emulatorEnv(e.emu), ...FORM_ORDER });
          if (r.code !== 0 || r.json?.counts?.uploaded !== files) throw new Error(`bigfile many mirror: exit ${r.code}, ${JSON.stringify(r.json?.counts)}`);
          return r.ms;
        },
      };
      for (const name of round % 2 === 0 ? ['curl', 'ferry'] : ['ferry', 'curl']) {
        await settleDisk();
        manyUp[name].push(await upSides[name]());
      }
      // Down: the project ferry mirrored, by ferry and by curl 8 at a time.
      const out = join(work, 'bigfile-many-out');
      const docs = await documentsOf(e.client, ferryProject);
      const list = join(work, 'bigfile-many-urls');
      await writeFile(list, docs.map((d) => `${d.url} ${join(out, d.name)}`).join('\n'));
      const downSides = {
        curl: async () => {
          await rm(out, { recursive: true, force: true });
          await mkdir(out, { recursive: true });
          await settleDisk();
          return timedProcess('/bin/sh', ['-c', 'xargs -P 8 -n 2 sh -c \'curl -sS -f -o "$1" -H "authorization: Bearer $B" "$0"\' < "$1"', 'sh', list], { B: e.bearer });
        },
        ferry: async () => {
          await rm(out, { recursive: true, force: true });
          await settleDisk();
          const r = await runFerry(work, 'pull', ['pull', ferryProject, out], { ...ferryEnv(work, `bigfile-many-pull-${round}`), ...emulatorEnv(e.emu) });
          if (r.code !== 0 || r.json?.counts?.downloaded !== files) throw new Error(`bigfile many pull: exit ${r.code}, ${JSON.stringify(r.json?.counts)}`);
          return r.ms;
        },
      };
      for (const name of round % 2 === 0 ? ['curl', 'ferry'] : ['ferry', 'curl']) manyDown[name].push(await downSides[name]());
      await rm(out, { recursive: true, force: true });
    } finally {
      await e.stop();
    }
    console.error(`bigfile many round ${round + 1}: mirror ${Math.round(manyUp.ferry[round])} ms beside xargs curl -F ${Math.round(manyUp.curl[round])} ms; pull ${Math.round(manyDown.ferry[round])} ms beside xargs curl ${Math.round(manyDown.curl[round])} ms`);
  }
  await rm(many, { recursive: true, force: true });
  const manyUpRatio = ratios(manyUp.curl, manyUp.ferry);
  const manyDownRatio = ratios(manyDown.curl, manyDown.ferry);
  results.spreads['bigfile many'] = { mirror: manyUpRatio, pull: manyDownRatio };
  record(`pull ${files} files of ${fileMiB} MiB, ferry beside xargs -P8 curl -o`, manyRate(manyDown.ferry), manyRate(manyDown.curl), 'MB/s', manyDownRatio.median, undefined, `default concurrency; ${rounds} rounds alternating; per-round ratios ${manyDownRatio.min.toFixed(2)}-${manyDownRatio.max.toFixed(2)}`);
  record(`mirror ${files} files of ${fileMiB} MiB, ferry beside xargs -P8 curl -F`, manyRate(manyUp.ferry), manyRate(manyUp.curl), 'MB/s', manyUpRatio.median, undefined, `default concurrency; ${rounds} rounds alternating; per-round ratios ${manyUpRatio.min.toFixed(2)}-${manyUpRatio.max.toFixed(2)}`);
}

/**
 * The same file over https, as the real service is reached (`ferry emulator --tls-cert`, a
 * throwaway certificate ferry trusts through NODE_EXTRA_CA_CERTS, curl through --cacert): a pull
 * and a mirror beside curl, pinned as above. Information: the targets are read over plain http.
 */
async function overHttps({ work, record, results, rounds, src, big, label, size }) {
  const dir = join(work, 'bigfile-tls');
  await mkdir(dir, { recursive: true });
  const tls = { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', tls.key, '-out', tls.cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1']);
  const rate = (t) => Math.round(size / 1e6 / (spread(t).median / 1000));
  const down = { curl: [], ferry: [] };
  const held = await emulatorWithProject(work, 'bigfile-tls-pull', tls);
  try {
    const project = await held.project('held');
    await timedProcess('curl', curlUpload(held, project, big));
    const [doc] = await documentsOf(held.client, project);
    const out = join(work, 'bigfile-tls-out');
    for (let round = 0; round < rounds; round++) {
      for (const name of round % 2 === 0 ? ['curl', 'ferry'] : ['ferry', 'curl']) {
        await rm(out, { recursive: true, force: true });
        await mkdir(out, { recursive: true });
        await settleDisk();
        const r = await pinnedTo(held.emu.pid, async () =>
          name === 'curl'
            ? { ms: await timedProcess('curl', ['-sS', '-f', ...trusting(held), '-o', join(out, 'big.bin'), '-H', `authorization: Bearer ${held.bearer}`, doc.url]) }
            : runFerry(work, 'pull', ['pull', project, join(out, 'copy')], { ...ferryEnv(work, `bigfile-tls-pull-${round}`), ...towards(held) }),
        );
        if (name === 'ferry' && (r.code !== 0 || r.json?.counts?.downloaded !== 1)) throw new Error(`bigfile https pull: exit ${r.code}, ${JSON.stringify(r.json?.counts)}`);
        down[name].push(r.ms);
      }
      console.error(`bigfile https pull round ${round + 1}: curl -o ${Math.round(down.curl[round])} ms, ferry ${Math.round(down.ferry[round])} ms`);
    }
    await rm(out, { recursive: true, force: true });
  } finally {
    await held.stop();
  }
  const up = { curl: [], ferry: [] };
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? ['curl', 'ferry'] : ['ferry', 'curl']) {
      const e = await emulatorWithProject(work, 'bigfile-tls-mirror', tls);
      try {
        const project = await e.project(`${name} https ${round}`);
        await settleDisk();
        const r = await pinnedTo(e.emu.pid, async () => (name === 'curl' ? { ms: await timedProcess('curl', curlUpload(e, project, big)) } : ferryMirrorOne(work, e, src, project, `bigfile-tls-mirror-${round}`)));
        up[name].push(r.ms);
      } finally {
        await e.stop();
      }
    }
    console.error(`bigfile https mirror round ${round + 1}: curl -F ${Math.round(up.curl[round])} ms, ferry ${Math.round(up.ferry[round])} ms`);
  }
  const downRatio = ratios(down.curl, down.ferry);
  const upRatio = ratios(up.curl, up.ferry);
  results.spreads['bigfile https'] = { pull: downRatio, mirror: upRatio };
  record(`pull one ${label} file over https, ferry beside curl -o, each on a core of its own`, rate(down.ferry), rate(down.curl), 'MB/s', downRatio.median, undefined, `information; the emulator with --tls-cert; ${rounds} rounds alternating; per-round ratios ${downRatio.min.toFixed(2)}-${downRatio.max.toFixed(2)}`);
  record(`mirror one ${label} file over https, ferry beside curl -F, each on a core of its own`, rate(up.ferry), rate(up.curl), 'MB/s', upRatio.median, undefined, `information; a fresh emulator with --tls-cert for each side of each round; per-round ratios ${upRatio.min.toFixed(2)}-${upRatio.max.toFixed(2)}; formOrder any`);
  await rm(dir, { recursive: true, force: true });
}
