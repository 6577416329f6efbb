// The emulator as every team's test server (issue 64), `npm run bench -- --only=control`: one
// emulator process keeping its state on disk, driven over HTTP as a test suite would.
//
//   snapshot and restore of a state holding 10,000 documents (4 KiB each): the control API's time
//     and the disk a snapshot adds (du of the data folder before and after: hard links count once),
//     beside the bare way to copy that state, `cp -r` of its database and blobs;
//   16 clients at once against one emulator, beside 1: requests per second of a mix of lists,
//     reads, downloads and uploads, and every status that was not a success (the service's own
//     answers would be 429 or 503 under load; the emulator, with no rate limit set, should give none).
//
// Each side alternates which goes first, 5 rounds; ratios are medians of the rounds' ratios.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Agent, FormData, request } from 'undici';
import { startEmulatorProcess } from './lib.mjs';

const run = promisify(execFile);

function spread(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)], min: sorted[0], max: sorted[sorted.length - 1], runs: sorted.length };
}

async function ms(fn) {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function duKiB(path) {
  return Number((await run('du', ['-sk', path])).stdout.split('\t')[0]);
}

async function tokenOf(emu, tenant = 0) {
  const t = emu.tenants[tenant];
  const res = await request(`${emu.authUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: t.clientId, client_secret: t.clientSecret, audience: emu.audience }).toString(),
  });
  return (await res.body.json()).access_token;
}

function controlOf(emu, dispatcher) {
  return async (method, path, body) => {
    const res = await request(`${emu.baseUrl}/_emulator/${path}`, {
      method,
      dispatcher,
      headers: { authorization: `Bearer ${emu.adminToken}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} /_emulator/${path}: ${res.statusCode} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
}

async function upload(emu, dispatcher, bearer, project, name, content) {
  const form = new FormData();
  form.append('file', new Blob([content]), name);
  const res = await request(`${emu.baseUrl}/projects/${project}/documents?documentUploadIdentifier=${randomUUID()}`, { method: 'POST', dispatcher, headers: { authorization: `Bearer ${bearer}` }, body: form });
  const body = await res.body.json();
  return { status: res.statusCode, body };
}

export async function benchControl({ work, record, results, documents = 10_000, rounds = 5, clients = 16, seconds = 3 }) {
  results.spreads ??= {};
  const data = join(work, 'control-emulator');
  await rm(data, { recursive: true, force: true });
  await mkdir(data, { recursive: true });
  const emu = await startEmulatorProcess(data);
  const dispatcher = new Agent({ connections: 64, pipelining: 1 });
  const control = controlOf(emu, dispatcher);
  try {
    const bearer = await tokenOf(emu);
    const project = emu.project;
    // The state: 10,000 documents of 4 KiB, uploaded through the service's own route, 8 at a time.
    const content = Buffer.alloc(4096, 'd');
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < documents) {
          const i = next++;
          const r = await upload(emu, dispatcher, bearer, project, `doc-${String(i).padStart(5, '0')}.txt`, content);
          if (r.status !== 200) throw new Error(`seeding upload ${i}: ${r.status}`);
        }
      }),
    );
    await control('POST', 'processing/drain');
    console.error(`control: ${documents} documents uploaded`);

    // Snapshot and restore, beside cp -r of the same database and blobs.
    const times = { snapshot: [], restore: [], cp: [], cpBack: [] };
    const added = [];
    let stateBytes = 0;
    const copy = join(work, 'control-copy');
    for (let round = 0; round < rounds; round++) {
      const sides = {
        ferry: async () => {
          const before = await duKiB(data);
          let info;
          times.snapshot.push(await ms(async () => (info = await control('POST', 'snapshots', { name: `round-${round}` }))));
          added.push((await duKiB(data)) - before);
          stateBytes = info.stateBytes;
          if (info.documents !== documents) throw new Error(`snapshot holds ${info.documents} documents, not ${documents}`);
          times.restore.push(await ms(() => control('POST', `snapshots/round-${round}/restore`)));
          await control('DELETE', `snapshots/round-${round}`);
        },
        cp: async () => {
          await rm(copy, { recursive: true, force: true });
          await mkdir(copy, { recursive: true });
          times.cp.push(await ms(() => run('cp', ['-r', join(data, 'state.sqlite'), join(data, 'blobs'), copy])));
          const back = join(work, 'control-copy-back');
          await rm(back, { recursive: true, force: true });
          await mkdir(back, { recursive: true });
          times.cpBack.push(await ms(() => run('cp', ['-r', join(copy, 'state.sqlite'), join(copy, 'blobs'), back])));
          await rm(back, { recursive: true, force: true });
        },
      };
      for (const side of round % 2 === 0 ? ['ferry', 'cp'] : ['cp', 'ferry']) await sides[side]();
      console.error(`control round ${round + 1}: snapshot ${Math.round(times.snapshot[round])} ms (+${added[round]} KiB), restore ${Math.round(times.restore[round])} ms; cp -r ${Math.round(times.cp[round])} ms, back ${Math.round(times.cpBack[round])} ms`);
    }
    await rm(copy, { recursive: true, force: true });
    const copyKiB = await duKiB(join(data, 'blobs')) + Math.ceil(stateBytes / 1024);
    const snap = spread(times.snapshot);
    const restore = spread(times.restore);
    const cp = spread(times.cp);
    const snapRatio = spread(times.snapshot.map((t, i) => t / times.cp[i]));
    const restoreRatio = spread(times.restore.map((t, i) => t / times.cpBack[i]));
    results.spreads['control snapshot'] = { snapshot: snap, restore, cp, snapshotOverCp: snapRatio, restoreOverCp: restoreRatio, addedKiB: spread(added) };
    record(`emulator snapshot of ${documents} documents, beside cp -r of its database and blobs`, Math.round(snap.median), Math.round(cp.median), 'ms', snapRatio.median, undefined, `${rounds} rounds alternating; per-round ratios ${snapRatio.min.toFixed(2)}-${snapRatio.max.toFixed(2)}; over HTTP, POST /_emulator/snapshots`);
    record(`emulator restore of ${documents} documents, beside cp -r of the copy back`, Math.round(restore.median), Math.round(spread(times.cpBack).median), 'ms', restoreRatio.median, undefined, `${rounds} rounds; per-round ratios ${restoreRatio.min.toFixed(2)}-${restoreRatio.max.toFixed(2)}`);
    record(`disk a snapshot of ${documents} documents adds, beside what cp -r writes`, spread(added).median, copyKiB, 'KiB', spread(added).median / copyKiB, undefined, `du of the data folder before and after (hard links count once); the database file alone ${Math.round(stateBytes / 1024)} KiB`);

    // 16 clients at once, beside 1: a mix of what test suites do.
    const tokens = await Promise.all(Array.from({ length: clients }, (_, i) => tokenOf(emu, i % emu.tenants.length)));
    const projects = emu.tenants.map((t) => t.assistants[0].projectIdentifier);
    const listed = await request(`${emu.baseUrl}/projects/${project}/documents?flattenList=true&pageSize=100`, { dispatcher, headers: { authorization: `Bearer ${bearer}` } });
    const someDocs = (await listed.body.json()).items;
    const load = async (n) => {
      const statuses = new Map();
      let count = 0;
      const until = Date.now() + seconds * 1000;
      const note = (status) => {
        count++;
        if (status >= 300) statuses.set(status, (statuses.get(status) ?? 0) + 1);
      };
      const started = process.hrtime.bigint();
      await Promise.all(
        Array.from({ length: n }, async (_, c) => {
          const token = tokens[c];
          const mine = projects[c % emu.tenants.length];
          const headers = { authorization: `Bearer ${token}` };
          for (let step = 0; Date.now() < until; step++) {
            const kind = step % 4;
            let res;
            if (kind === 0) res = await request(`${emu.baseUrl}/projects?pageSize=20`, { dispatcher, headers });
            else if (kind === 1) res = await request(`${emu.baseUrl}/projects/${mine}/documents?pageSize=50`, { dispatcher, headers });
            else if (kind === 2 && c % emu.tenants.length === 0) res = await request(someDocs[step % someDocs.length].url, { dispatcher, headers });
            else {
              const up = await upload(emu, dispatcher, token, mine, `load-${c}-${step}.txt`, content);
              note(up.status);
              continue;
            }
            await res.body.dump();
            note(res.statusCode);
          }
        }),
      );
      return { rps: count / (Number(process.hrtime.bigint() - started) / 1e9), statuses };
    };
    const rps = { one: [], many: [] };
    const errors = new Map();
    for (let round = 0; round < rounds; round++) {
      for (const side of round % 2 === 0 ? ['one', 'many'] : ['many', 'one']) {
        const r = await load(side === 'one' ? 1 : clients);
        rps[side].push(r.rps);
        for (const [s, k] of r.statuses) errors.set(s, (errors.get(s) ?? 0) + k);
      }
      console.error(`control load round ${round + 1}: 1 client ${Math.round(rps.one[round])} req/s, ${clients} clients ${Math.round(rps.many[round])} req/s`);
    }
    const ratio = spread(rps.many.map((r, i) => r / rps.one[i]));
    const errorCount = [...errors.values()].reduce((a, b) => a + b, 0);
    results.spreads['control load'] = { one: spread(rps.one), many: spread(rps.many), ratio, errors: Object.fromEntries(errors) };
    record(`${clients} clients at once against one emulator, beside 1 client`, Math.round(spread(rps.many).median), Math.round(spread(rps.one).median), 'req/s', ratio.median, undefined, `${rounds} rounds of ${seconds} s alternating; per-round ratios ${ratio.min.toFixed(2)}-${ratio.max.toFixed(2)}; a mix of project lists, document lists, downloads and 4 KiB uploads; 2 cores shared by the emulator and the clients`);
    record(`statuses other than success under ${clients} clients`, errorCount, 0, 'responses', errorCount, '<= 0', errorCount ? JSON.stringify(Object.fromEntries(errors)) : 'none: no rate limit is set, so the service would give none either');
  } finally {
    await dispatcher.close();
    await emu.stop();
    await rm(data, { recursive: true, force: true });
  }
}
