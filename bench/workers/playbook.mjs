// One side of the playbook bench in its own process (so its peak RSS is its own): ferry's export
// or import, or the bare loop of the same calls. Prints {ms, maxRssKiB, ...} as one JSON line.
//   export   ferry|bare  EMULATOR_JSON PLAYBOOK_ID OUT
//   import   ferry|bare  EMULATOR_JSON ARCHIVE STATE
import { peakRssKiB } from './peak.mjs';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { request, FormData } from 'undici';
import { openAsBlob } from 'node:fs';
import unzipper from 'unzipper';
import { exportPlaybooks, importArchive } from '../../dist/jobs/playbooks.js';
import { FerryClient } from '../../dist/src/index.js';
import { SqliteCheckpointStore } from '../../dist/src/store/index.js';

const [what, side, emuJson, a, b] = process.argv.slice(2);
const emu = JSON.parse(emuJson);
const tenant = emu.tenants[1];
const credentials = what === 'export' ? emu.credentials : { clientId: tenant.clientId, clientSecret: tenant.clientSecret, audience: emu.audience };
let started = process.hrtime.bigint();
let extra = {};

async function bearer() {
  const res = await request(`${emu.authUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: credentials.clientId, client_secret: credentials.clientSecret, audience: emu.audience }).toString(),
  });
  return (await res.body.json()).access_token;
}

async function call(token, method, path, body) {
  const res = await request(`${emu.baseUrl}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body && !(body instanceof FormData) ? { 'content-type': 'application/json' } : {}) }, body: body instanceof FormData ? body : body ? JSON.stringify(body) : undefined });
  if (res.statusCode >= 400) throw new Error(`${method} ${path} answered ${res.statusCode}`);
  return res;
}
const json = async (token, method, path, body) => (await call(token, method, path, body)).body.json();

if (what === 'export' && side === 'ferry') {
  const client = new FerryClient({ address: emu.address, credentials });
  const store = new SqliteCheckpointStore(join(b, '..', 'export.sqlite'));
  const summary = await exportPlaybooks({ ids: [a], all: false, out: b }, { client, store });
  if (summary.status !== 'succeeded') throw new Error(JSON.stringify(summary.errors));
  extra = { bytes: summary.bytes };
  store.close();
  await client.close();
} else if (what === 'export') {
  // The same GET calls, each body streamed to a file, no archive, no checks.
  const token = await bearer();
  await mkdir(b, { recursive: true });
  const pb = `/playbooks/${a}`;
  await json(token, 'GET', '/playbooks?pageNumber=1&pageSize=100');
  await json(token, 'GET', `${pb}/metadata?pageNumber=1&pageSize=100`);
  await json(token, 'GET', `${pb}/reference-materials`);
  const assemblies = (await json(token, 'GET', `${pb}/assemblies?pageNumber=1&pageSize=100`)).items;
  for (const [i, asm] of assemblies.entries()) {
    const tree = await json(token, 'GET', `${pb}/assemblies/${asm.objectIdentifier}/rich-text`);
    const content = await call(token, 'GET', `${pb}/assemblies/${asm.objectIdentifier}/content`);
    await pipeline(content.body, createWriteStream(join(b, `${i}.bin`)));
    for (const ref of uuids(tree)) {
      const res = await request(`${emu.baseUrl}${pb}/assemblies/${asm.objectIdentifier}/references/${ref.uuid}/template-columns?page=1&pageSize=100`, { headers: { authorization: `Bearer ${token}` } });
      await res.body.dump();
      if (res.statusCode !== 200) continue;
      for (const cond of ref.inside) await (await request(`${emu.baseUrl}${pb}/assemblies/${asm.objectIdentifier}/references/${ref.uuid}/conditions/${cond}/category-conditions?page=1&pageSize=100`, { headers: { authorization: `Bearer ${token}` } })).body.dump();
    }
  }
  await rm(b, { recursive: true, force: true });
} else if (side === 'ferry') {
  const client = new FerryClient({ address: emu.address, credentials });
  const store = new SqliteCheckpointStore(b);
  const mapping = { organizationMetadata: Object.fromEntries(tenant.organizationMetadata.map((d) => [d.name, d.objectIdentifier])) };
  const summary = await importArchive({ file: a, mode: 'replay', mapping }, { client, store });
  if (summary.status !== 'succeeded') throw new Error(JSON.stringify(summary.errors));
  extra = { created: summary.counts.uploaded };
  store.close();
  await client.close();
} else {
  // The same create calls in a bare loop, no id map, no checkpoint, no rewriting, no settling, no
  // archive checks. Its template files are unpacked to disk first, outside the timing.
  const zip = await unzipper.Open.file(a);
  const doc = JSON.parse((await zip.files.find((f) => f.path === 'playbook.json').buffer()).toString());
  const unpacked = join(b, 'unpacked');
  await mkdir(unpacked, { recursive: true });
  for (const [i, asm] of doc.assemblies.entries()) if (asm.file) await pipeline(zip.files.find((f) => f.path === asm.file).stream(), createWriteStream(join(unpacked, `${i}.bin`)));
  started = process.hrtime.bigint();
  const token = await bearer();
  const defs = new Map(tenant.organizationMetadata.map((d) => [d.name, d.objectIdentifier]));
  const pb = await json(token, 'POST', '/playbooks', { name: doc.playbook.name, description: doc.playbook.description, isPrivate: false, organizationWide: true, metadata: doc.metadata.filter((m) => !m.singleCategoryIdentifier && !m.categories).map((m) => ({ organizationMetadataIdentifier: defs.get(m.organizationMetadataName), text: m.text, decimalValue: m.decimalValue, isYes: m.isYes, date: m.date })) });
  const id = pb.objectIdentifier;
  for (const m of doc.referenceMaterials) await json(token, 'POST', `/playbooks/${id}/reference-materials`, { name: m.name, type: m.type, description: m.description, textValue: m.textValue, booleanValue: m.booleanValue, decimalValue: m.decimalValue, categories: m.categories.map((c) => ({ name: c.name })) });
  for (const [i, asm] of doc.assemblies.entries()) {
    const form = new FormData();
    form.set('Name', asm.name);
    form.set('Description', asm.description ?? '');
    form.set('Type', asm.assemblyType);
    if (asm.file) form.set('File', await openAsBlob(join(unpacked, `${i}.bin`)), 'template.docx');
    const created = await json(token, 'POST', `/playbooks/${id}/assemblies`, form);
    await json(token, 'PUT', `/playbooks/${id}/assemblies/${created.objectIdentifier}/rich-text`, asm.richText);
    for (const [ref, cols] of Object.entries(asm.templateColumns)) for (const c of cols) await json(token, 'POST', `/playbooks/${id}/assemblies/${created.objectIdentifier}/references/${ref}/template-columns`, { name: c.name, template: c.template });
    for (const [cond, items] of Object.entries(asm.categoryConditions)) for (const c of items) await json(token, 'POST', `/playbooks/${id}/assemblies/${created.objectIdentifier}/references/${asm.conditionReferences[cond]}/conditions/${cond}/category-conditions`, { fuzzyMatch: c.fuzzyMatch, text: c.text });
  }
}

function uuids(tree) {
  const out = [];
  const walk = (node, ancestors) => {
    if (!node || typeof node !== 'object') return;
    let mine;
    if (typeof node.attrs?.uuid === 'string') {
      for (const a of ancestors) a.inside.push(node.attrs.uuid);
      mine = { uuid: node.attrs.uuid, inside: [] };
      out.push(mine);
    }
    for (const child of node.content ?? []) walk(child, mine ? [...ancestors, mine] : ancestors);
  };
  walk(tree, []);
  return out;
}

process.stdout.write(`${JSON.stringify({ ms: Number(process.hrtime.bigint() - started) / 1e6, maxRssKiB: peakRssKiB(), ...extra })}\n`);
