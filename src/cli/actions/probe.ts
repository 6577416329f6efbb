// `ferry doctor --probe`: which answer the live tenant gives to each question the spec leaves open
// (docs/emulator.md, "Modes: the other answers"), asked on the service itself, in a scratch
// project made for it and removed at the end (Ctrl-C included; one a `kill -9` left is removed by
// the next probe from the same host). Each finding says which emulator mode it matches, and
// `matches` gives them back as the flags of `ferry emulator` that behave the same.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FerryClient } from '../../api/client.js';
import { ApiError, PermissionDeniedError } from '../../api/errors.js';
import type { Document, Project } from '../../api/types.js';
import { formatLag } from '../../api/listing-lag.js';
import { CANARY_PREFIX, probeListingLag, until } from './probe-lag.js';
import { pidAlive } from '../../processes.js';

/** Scratch projects are named so; the description says who made it (host, pid), so that a leftover can be told from a live probe. */
export const SCRATCH_PREFIX = '.ferry-probe Scratch ';
const SCRATCH_DESCRIPTION = 'made by `ferry doctor --probe` to find how this service answers what its interface leaves open; removed by it at the end';
/** Tiny documents uploaded into the scratch project (the page cap is looked for with them). */
const DOCUMENTS = 10;
/** Metadata that must come back as sent: non-ASCII keys and values, and a value of 1 KiB. */
const METADATA: Record<string, string> = { 'ferry.probe': 'Grüße ✓ 日本', 'clé': 'x'.repeat(1024) };

export type Unknown = { unknown: string };

export interface ProbeFindings {
  folderRoute: { offered: boolean; status?: number } | Unknown;
  /** A route, or a link: whether it wants the token, and the last time it was seen working (null: still after the wait). */
  contentRoute: { route: boolean; linkNeedsToken?: boolean; linkWorksAfterMs?: number | null } | Unknown;
  /**
   * Whether a document's content answers `Range` with exactly the bytes asked (a pull killed
   * part-way continues from what it kept) or sends the whole (it starts over), and the validator
   * it names the content by, which a continued download is checked against.
   */
  contentRange: { honoured: boolean; validator: 'etag' | 'last-modified' | 'none'; mismatch?: string } | Unknown;
  /** The largest page the service gave for a larger pageSize, or null: none seen below `checkedUpTo`. */
  pageCap: { cap: number | null; checkedUpTo: number } | Unknown;
  listingLagMs: { worstMs: number; suggested: string } | Unknown;
  dateAddedResolutionMs: { ms: number; samples: number } | Unknown;
  search: { match: 'substring' | 'prefix' | 'word'; caseSensitive: boolean } | Unknown;
  /** Whether two folders whose names differ only by case may stand side by side (asked only where folders can be made). */
  folderCase: { caseSensitive: boolean } | Unknown;
  metadataRoundTrip: { kept: 'kept' | 'dropped' | 'altered' } | Unknown;
  /** Whether an upload's metadataJson sent after its file part is read (`any`) or not (`fields-first`). */
  formOrder: { order: 'any' | 'fields-first' } | Unknown;
  /** When a playbook document upload's `dateCompleted` is set: once nothing of it processes, or at the PATCH. */
  dateCompleted: { when: 'when-processed' | 'at-patch' } | Unknown;
  /** What `stream: true` answers: events with the Message, plain JSON, or events without it. */
  streamFormat: { format: 'events' | 'json' | 'no-final' } | Unknown;
}

export interface ProbeReport {
  probe: ProbeFindings;
  /** The `ferry emulator` flags that answer as this service did ('' when it answers as the default). */
  matches: string;
  /** What was made on the service, and removed. */
  scratch: { created: number; removed: number; leftoversRemoved: number };
}

export interface ProbeOptions {
  /** How long after it was handed out a document link is tried again (the service may sign links for a short time). */
  linkWaitMs: number;
  /** A playbook the probe may add a document upload to (it removes the upload; a playbook cannot be removed, so never one of ours). */
  playbook?: string | undefined;
  /** An assistant's chat (`PROJECT/ASSISTANT`) and a model the probe may send one message to. */
  assistant?: { projectIdentifier: string; assistantIdentifier: string } | undefined;
  model?: string | undefined;
  signal: AbortSignal;
  /** Said as the probe goes (stderr). */
  say: (line: string) => void;
}

const unknown = (err: unknown): Unknown => ({ unknown: err instanceof Error ? err.message : String(err) });

/**
 * Runs one question; a failure makes that finding unknown, with the reason, and the rest goes on.
 * Once the probe is stopped (Ctrl-C) no question is asked any more.
 */
function asker(signal: AbortSignal): <T>(question: () => Promise<T>) => Promise<T | Unknown> {
  return async (question) => {
    if (signal.aborted) return { unknown: 'not asked: the probe was stopped' };
    try {
      return await question();
    } catch (err) {
      return signal.aborted ? { unknown: 'not asked: the probe was stopped' } : unknown(err);
    }
  };
}

export async function probeService(client: FerryClient, opts: ProbeOptions): Promise<ProbeReport> {
  const ask = asker(opts.signal);
  const scratch = { created: 0, removed: 0, leftoversRemoved: await removeLeftovers(client, opts) };
  const name = `${SCRATCH_PREFIX}${randomUUID()}`;
  let project: Project;
  try {
    project = await client.projects.create({ name, description: JSON.stringify({ note: SCRATCH_DESCRIPTION, host: hostname(), pid: process.pid }) });
  } catch (err) {
    if (err instanceof PermissionDeniedError) return readOnly(client, scratch, opts);
    throw err;
  }
  scratch.created++;
  const id = project.objectIdentifier;
  opts.say(`scratch project ${id} made (${name}); removed at the end`);
  try {
    const times: string[] = [project.dateAdded ?? ''];
    const listingLagMs = await ask(async () => {
      const lag = await probeListingLag(client, opts.signal, 1);
      const documentLag = await documentListingLag(client, id, opts, times);
      const worstMs = lag.worstMs === null ? null : Math.max(lag.worstMs, documentLag);
      if (worstMs === null) throw new Error('a canary was not listed within the give-up time');
      scratch.created += lag.canary.created;
      scratch.removed += lag.canary.removed;
      return { worstMs, suggested: worstMs < 100 ? '0' : `${Math.ceil((worstMs * 1.5) / 1000)}s` };
    });
    const lagMs = 'worstMs' in listingLagMs ? listingLagMs.worstMs : 0;
    const docs = await ask(() => uploadDocuments(client, id, opts, times));
    if (lagMs > 0) await sleep(lagMs, undefined, { signal: opts.signal }).catch(() => undefined);
    const findings: ProbeFindings = {
      folderRoute: await ask(() => folderRoute(client, id)),
      folderCase: await ask(() => folderCase(client, id)),
      contentRoute: 'unknown' in docs ? docs : await ask(() => contentRoute(client, id, docs[0] as Document, opts)),
      contentRange: 'unknown' in docs ? docs : await ask(() => contentRange(client, id, docs[0] as Document)),
      pageCap: await ask(() => pageCap(client, id)),
      listingLagMs,
      dateAddedResolutionMs: await ask(async () => resolutionOf(times)),
      search: await ask(() => searchStyle(client, name)),
      metadataRoundTrip: 'unknown' in docs ? docs : await ask(() => metadataRoundTrip(client, id)),
      formOrder: await ask(() => formOrder(client, id)),
      dateCompleted: opts.playbook ? await ask(() => dateCompleted(client, id, opts.playbook as string, opts)) : { unknown: 'not asked: name a playbook the probe may add a document upload to (--playbook ID)' },
      streamFormat: opts.assistant && opts.model ? await ask(() => streamFormat(client, opts.assistant!, opts.model as string)) : { unknown: 'not asked: name an assistant and a model the probe may send one message to (--assistant PROJECT/ASSISTANT --model ID)' },
    };
    return { probe: findings, matches: matchesOf(findings), scratch };
  } finally {
    await client.projects.delete(id).then(
      () => scratch.removed++,
      (err: unknown) => opts.say(`the scratch project ${id} could not be removed (${err instanceof Error ? err.message : String(err)}); the next probe from this host removes it`),
    );
  }
}

/** A read-only client: what reading alone can tell, and what it could not. */
async function readOnly(client: FerryClient, scratch: ProbeReport['scratch'], opts: ProbeOptions): Promise<ProbeReport> {
  const ask = asker(opts.signal);
  opts.say('this client may only read: the questions that need a write are unknown');
  const cannot = { unknown: 'needs a client that may write (this one is read-only: 403)' };
  const times: string[] = [];
  for (const p of (await client.projects.list({ sorting: 'dateAdded', desc: true }, { leaseRecords: true }).page(1, 20)).items) if (p.dateAdded) times.push(p.dateAdded);
  const findings: ProbeFindings = {
    folderRoute: cannot,
    contentRoute: cannot,
    contentRange: cannot,
    pageCap: await ask(async () => {
      const page = await client.projects.list({}, { leaseRecords: true }).page(1, 1000);
      const total = page.totalCount ?? page.items.length;
      return { cap: page.items.length < Math.min(1000, total) ? page.items.length : null, checkedUpTo: Math.min(1000, total) };
    }),
    listingLagMs: cannot,
    dateAddedResolutionMs: await ask(async () => resolutionOf(times)),
    search: cannot,
    folderCase: cannot,
    metadataRoundTrip: cannot,
    formOrder: cannot,
    dateCompleted: cannot,
    streamFormat: cannot,
  };
  return { probe: findings, matches: matchesOf(findings), scratch };
}

/** Scratch projects and canaries of earlier probes from this host whose process is gone (a `kill -9`), removed. */
async function removeLeftovers(client: FerryClient, opts: ProbeOptions): Promise<number> {
  let removed = 0;
  const page = await client.projects.list({ searchText: CANARY_PREFIX.trim() }, { leaseRecords: true }).page(1, 100).catch(() => undefined);
  for (const p of page?.items ?? []) {
    // Scratch projects and listing-lag canaries (`.ferry-probe <uuid>`) alike.
    if (!p.name?.startsWith(CANARY_PREFIX)) continue;
    let owner: { host?: string; pid?: number } = {};
    try {
      owner = JSON.parse(p.description ?? '{}') as typeof owner;
    } catch {
      continue;
    }
    if (owner.host !== hostname() || typeof owner.pid !== 'number' || pidAlive(owner.pid)) continue;
    await client.projects.delete(p.objectIdentifier).then(
      () => {
        removed++;
        opts.say(`removed the scratch project ${p.objectIdentifier} an earlier probe (pid ${owner.pid}) left behind`);
      },
      () => undefined,
    );
  }
  return removed;
}


function tiny(i: number): { open: () => Readable; size: number; filename: string; contentType: string } {
  const body = Buffer.from(`ferry probe document ${i}\n`);
  return { open: () => Readable.from([body]), size: body.length, filename: `probe-${String(i).padStart(2, '0')}.txt`, contentType: 'text/plain' };
}

/** How late one new document shows in the project's list and in a `searchText` search, ms. */
async function documentListingLag(client: FerryClient, project: string, opts: ProbeOptions, times: string[]): Promise<number> {
  const batch = randomUUID();
  const doc = await client.documents.upload(project, tiny(0), { documentUploadIdentifier: batch, metadata: METADATA });
  if (doc.dateAdded) times.push(doc.dateAdded);
  const at = performance.now();
  const name = doc.name ?? 'probe-00.txt';
  const listed = until(async () => (await client.documents.list(project, {}).page(1, 50)).items.some((d) => d.objectIdentifier === doc.objectIdentifier), true, at, opts.signal);
  const searched = until(async () => (await client.documents.list(project, { searchText: name }).page(1, 50)).items.some((d) => d.objectIdentifier === doc.objectIdentifier), true, at, opts.signal);
  const [a, b] = await Promise.all([listed, searched]);
  if (a === null || b === null) throw new Error('a new document was not listed within the give-up time');
  return Math.max(a, b);
}

/** The rest of the tiny documents (the first went in with the lag probe); their answers. */
async function uploadDocuments(client: FerryClient, project: string, opts: ProbeOptions, times: string[]): Promise<Document[]> {
  const batch = randomUUID();
  const docs: Document[] = [];
  for (let i = 1; i < DOCUMENTS && !opts.signal.aborted; i++) {
    const doc = await client.documents.upload(project, tiny(i), { documentUploadIdentifier: batch });
    if (doc.dateAdded) times.push(doc.dateAdded);
    docs.push(doc);
  }
  return docs;
}

async function folderRoute(client: FerryClient, project: string): Promise<{ offered: boolean; status?: number }> {
  try {
    await client.documents.createFolder(project, 'probe folder', undefined, { idempotent: false });
    return { offered: true };
  } catch (err) {
    if (err instanceof ApiError && err.status !== null && err.status !== undefined && err.status < 500) return { offered: false, status: err.status };
    throw err;
  }
}

/** A folder, then its name in upper case beside it: a 409 says the tenant folds case (after folderRoute, which made the first folder or found none can be made). */
async function folderCase(client: FerryClient, project: string): Promise<{ caseSensitive: boolean }> {
  try {
    await client.documents.createFolder(project, 'PROBE FOLDER', undefined, { idempotent: false });
    return { caseSensitive: true };
  } catch (err) {
    if (err instanceof ApiError && err.status === 409) return { caseSensitive: false };
    throw err;
  }
}

async function contentRoute(client: FerryClient, project: string, uploaded: Document, opts: ProbeOptions): Promise<{ route: boolean; linkNeedsToken?: boolean; linkWorksAfterMs?: number | null }> {
  // A link fresh from a listing, timed from the moment it was handed out.
  const doc = (await freshDocument(client, project, uploaded)) ?? uploaded;
  const handedOut = performance.now();
  if (!doc.url) throw new Error('the service gave the document no url');
  const url = new URL(doc.url, client.transport.address.baseUrl);
  const route = url.pathname.endsWith(`/documents/${doc.objectIdentifier}/content`);
  if (route) return { route: true };
  // A link: tried with no token (fetch carries none), then again after the wait.
  const plain = await fetch(url, { signal: opts.signal });
  await plain.body?.cancel();
  const linkNeedsToken = plain.status === 401 || plain.status === 403;
  const tryIt = async () => {
    try {
      const r = await client.documents.download(doc, { idempotent: true });
      r.body.resume();
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status !== null && err.status !== undefined && err.status < 500) return false;
      throw err;
    }
  };
  // Tried again at doubling intervals (0.25 s, 0.5, 1, 2 … up to the wait: nine tries in a minute):
  // still working at the end (null), or the last time it worked (from when it was handed out).
  let lastWorked = 0;
  for (let pause = 250; !opts.signal.aborted; pause *= 2) {
    const at = Math.min(handedOut + lastWorked + pause, handedOut + opts.linkWaitMs);
    await sleep(Math.max(0, at - performance.now()), undefined, { signal: opts.signal }).catch(() => undefined);
    const triedAt = Math.round(performance.now() - handedOut);
    if (!(await tryIt())) return { route: false, linkNeedsToken, linkWorksAfterMs: lastWorked };
    lastWorked = triedAt;
    if (triedAt >= opts.linkWaitMs) break;
  }
  return { route: false, linkNeedsToken, linkWorksAfterMs: null };
}

/** Its second half asked for with Range: exactly those bytes (206), or the whole. */
async function contentRange(client: FerryClient, project: string, uploaded: Document): Promise<{ honoured: boolean; validator: 'etag' | 'last-modified' | 'none'; mismatch?: string }> {
  const doc = (await freshDocument(client, project, uploaded)) ?? uploaded;
  const size = doc.size ?? 0;
  if (size < 2) throw new Error(`the service gave the document a size of ${size}`);
  const offset = Math.floor(size / 2);
  const got = await client.documents.downloadFrom(doc, size, offset, { idempotent: true });
  let bytes = 0;
  for await (const chunk of got.body) bytes += (chunk as Buffer).length;
  const validator = got.version === undefined ? 'none' : got.version.startsWith('"') || got.version.startsWith('W/"') ? 'etag' : 'last-modified';
  const honoured = got.from === offset && bytes === size - offset;
  return { honoured, validator, ...(got.mismatch ? { mismatch: got.mismatch } : {}) };
}

/** The document as a listing gives it now (its link signed afresh, where links are signed). */
async function freshDocument(client: FerryClient, project: string, doc: Document): Promise<Document | undefined> {
  if (!doc.name) return undefined;
  const page = await client.documents.list(project, { searchText: doc.name }).page(1, 50);
  return page.items.find((d) => d.objectIdentifier === doc.objectIdentifier);
}

async function pageCap(client: FerryClient, project: string): Promise<{ cap: number | null; checkedUpTo: number }> {
  let checkedUpTo = 0;
  for (const page of [await client.documents.list(project, { flattenList: true }).page(1, 1000), await client.projects.list({}, { leaseRecords: true }).page(1, 1000)]) {
    const total = page.totalCount ?? page.items.length;
    if (page.items.length < Math.min(1000, total)) return { cap: page.items.length, checkedUpTo: Math.min(1000, total) };
    checkedUpTo = Math.max(checkedUpTo, Math.min(1000, total));
  }
  return { cap: null, checkedUpTo };
}

/**
 * The coarsest of 1 ms, 10, 100 and 1 s that every time given is a whole multiple of. A probe
 * lasts seconds, so a coarser granularity (whole minutes) cannot be told from whole seconds: 1000
 * means whole seconds or coarser.
 */
function resolutionOf(times: string[]): { ms: number; samples: number } {
  const ms = times.map((t) => Date.parse(t)).filter((t) => Number.isFinite(t));
  if (ms.length < 3) throw new Error(`too few times to tell (${ms.length})`);
  let resolution = 1;
  for (const step of [10, 100, 1000]) if (ms.every((t) => t % step === 0)) resolution = step;
  return { ms: resolution, samples: ms.length };
}

async function searchStyle(client: FerryClient, name: string): Promise<{ match: 'substring' | 'prefix' | 'word'; caseSensitive: boolean }> {
  const found = async (text: string) => (await client.projects.list({ searchText: text }, { leaseRecords: true }).page(1, 50)).items.some((p) => p.name === name);
  const uuid = name.slice(SCRATCH_PREFIX.length);
  const [g1 = '', g2 = ''] = uuid.split('-');
  const inside = `${g1.slice(3)}-${g2}`; // begins inside a word: only a substring search finds it
  const word = 'Scratch'; // a whole word, not at the start
  const prefix = `${SCRATCH_PREFIX}${g1}`; // the name's start, ending on a word
  const match = (await found(inside)) ? 'substring' : (await found(word)) ? 'word' : (await found(prefix)) ? 'prefix' : undefined;
  if (!match) throw new Error('no search found the scratch project by its name');
  const asked = match === 'prefix' ? prefix : word;
  const flipped = asked.replace(/[a-zA-Z]/g, (c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()));
  return { match, caseSensitive: !(await found(flipped)) };
}

async function metadataRoundTrip(client: FerryClient, project: string): Promise<{ kept: 'kept' | 'dropped' | 'altered' }> {
  const page = await client.documents.list(project, { searchText: 'probe-00' }).page(1, 50);
  const doc = page.items.find((d) => d.name === 'probe-00.txt');
  if (!doc) throw new Error('the document sent with metadata is not listed');
  const back = Object.fromEntries((doc.metadata ?? []).map((m) => [m.key ?? '', m.value ?? '']));
  const sent = Object.entries(METADATA);
  if (sent.every(([k, v]) => back[k] === v)) return { kept: 'kept' };
  return { kept: sent.some(([k]) => k in back) ? 'altered' : 'dropped' };
}

/** One more tiny document, its metadata sent after its file part (made from its sha256, as ferry sends a large file's), listed back. */
async function formOrder(client: FerryClient, project: string): Promise<{ order: 'any' | 'fields-first' }> {
  const file = tiny(DOCUMENTS);
  const doc = await client.documents.upload(project, file, { documentUploadIdentifier: randomUUID(), metadataAfterFile: (sha256) => ({ 'ferry.probe': sha256 }) });
  const page = await client.documents.list(project, { searchText: file.filename }).page(1, 50);
  const listed = page.items.find((d) => d.objectIdentifier === doc.objectIdentifier);
  if (!listed) throw new Error('the document sent with its metadata after the file is not listed');
  const back = (listed.metadata ?? []).find((m) => m.key === 'ferry.probe')?.value;
  return { order: back === undefined ? 'fields-first' : 'any' };
}

/**
 * A document upload in the named playbook with one tiny document, marked complete at once: a
 * `dateCompleted` while the document still processes is set at the PATCH. The upload is removed.
 */
async function dateCompleted(client: FerryClient, project: string, playbook: string, opts: ProbeOptions): Promise<{ when: 'when-processed' | 'at-patch' }> {
  const batch = (await client.documentUploads.create(playbook, { name: `${CANARY_PREFIX}${randomUUID()}`, fileCount: 1 })).objectIdentifier;
  try {
    await client.documents.upload(project, tiny(DOCUMENTS), { documentUploadIdentifier: batch });
    await client.documentUploads.complete(playbook, batch);
    const first = await client.documentUploads.details(playbook, batch);
    if (first.dateCompleted && (first.processingDocumentCount ?? 0) > 0) return { when: 'at-patch' };
    if (first.dateCompleted) throw new Error('the document had finished processing before the PATCH: the two answers cannot be told apart this time');
    // Not yet: set once processing ends?
    const startedAt = performance.now();
    while (performance.now() - startedAt < 60_000 && !opts.signal.aborted) {
      await sleep(200, undefined, { signal: opts.signal }).catch(() => undefined);
      const d = await client.documentUploads.details(playbook, batch);
      if (d.dateCompleted) return { when: 'when-processed' };
    }
    throw new Error('dateCompleted was not set within a minute of the PATCH');
  } finally {
    await client.documentUploads.delete(playbook, batch).catch(() => undefined);
  }
}

/** One message sent with `stream: true` to the named assistant: what comes back. */
async function streamFormat(client: FerryClient, chat: { projectIdentifier: string; assistantIdentifier: string }, model: string): Promise<{ format: 'events' | 'json' | 'no-final' }> {
  const stream = client.messages.stream(chat, { text: 'ferry doctor --probe: a test message; any reply will do', modelIdentifier: model });
  let events = 0;
  let final = false;
  for await (const event of stream) {
    events++;
    if (event.data.startsWith('{') && /"isAssistant"/.test(event.data)) final = true;
  }
  if (events === 0) return { format: 'json' };
  return { format: final ? 'events' : 'no-final' };
}

/** The `ferry emulator` flags that answer as found. */
export function matchesOf(f: ProbeFindings): string {
  const flags: string[] = [];
  const content = 'unknown' in f.contentRoute ? undefined : f.contentRoute;
  const folders = 'unknown' in f.folderRoute ? undefined : f.folderRoute;
  if (content && !content.route) {
    flags.push('--strict');
    if (folders?.offered) flags.push('--folders extension');
    if (content.linkNeedsToken) flags.push('--link-auth token');
    if (content.linkWorksAfterMs !== null && content.linkWorksAfterMs !== undefined) flags.push(`--link-ttl ${Math.max(1, Math.ceil(content.linkWorksAfterMs / 1000))}`);
  } else if (folders && !folders.offered) flags.push('--folders none');
  if (!('unknown' in f.contentRange) && !f.contentRange.honoured) flags.push('--range ignored');
  if (!('unknown' in f.pageCap) && f.pageCap.cap !== null) flags.push(`--max-page-size ${f.pageCap.cap}`);
  // One word a shell passes as it is (`741ms`), not the way a person reads it (`741 ms`).
  if (!('unknown' in f.listingLagMs) && f.listingLagMs.suggested !== '0') flags.push(`--listing-lag ${Math.max(1, Math.ceil(f.listingLagMs.worstMs))}ms`);
  if (!('unknown' in f.dateAddedResolutionMs) && f.dateAddedResolutionMs.ms > 1) flags.push(`--time-resolution ${f.dateAddedResolutionMs.ms}`);
  if (!('unknown' in f.search)) {
    if (f.search.match !== 'substring') flags.push(`--search ${f.search.match}`);
    if (f.search.caseSensitive) flags.push('--search-case sensitive');
  }
  if (!('unknown' in f.folderCase) && f.folderCase.caseSensitive) flags.push('--folder-case sensitive');
  if (!('unknown' in f.metadataRoundTrip) && f.metadataRoundTrip.kept === 'dropped') flags.push('--metadata dropped');
  // A service that drops all metadata drops it wherever it comes: the order is then not told.
  if (!('unknown' in f.formOrder) && f.formOrder.order === 'fields-first' && ('unknown' in f.metadataRoundTrip || f.metadataRoundTrip.kept !== 'dropped')) flags.push('--form-order fields-first');
  if (!('unknown' in f.dateCompleted) && f.dateCompleted.when === 'at-patch') flags.push('--date-completed at-patch');
  if (!('unknown' in f.streamFormat) && f.streamFormat.format !== 'events') flags.push(`--stream-format ${f.streamFormat.format}`);
  return flags.join(' ');
}

/** The findings as lines for a person: each answer, the mode it matches, what ferry does. */
export function describeFindings(r: ProbeReport): string[] {
  const f = r.probe;
  const line = (name: string, x: object, said: (v: never) => string) => `${name}: ${'unknown' in x ? `unknown (${(x as Unknown).unknown})` : said(x as never)}`;
  return [
    line('folderRoute', f.folderRoute, (v: { offered: boolean; status?: number }) => (v.offered ? 'offered: ferry makes folders' : `absent (${v.status}): ferry flattens files of missing folders into the nearest one, their path in metadata ferry.relativePath`)),
    line('folderCase', f.folderCase, (v: { caseSensitive: boolean }) => (v.caseSensitive ? 'folder names that differ only by case are two folders' : 'folder names are compared regardless of case: a folder beside one differing only by case is a clash, its files failed by name')),
    line('contentRoute', f.contentRoute, (v: { route: boolean; linkNeedsToken?: boolean; linkWorksAfterMs?: number | null }) =>
      v.route ? 'a content route: ferry reads content through it' : `only a url link${v.linkNeedsToken ? ' that wants the token' : ' that works without the token'}, ${v.linkWorksAfterMs === null ? 'still working after the wait' : `working for ${formatLag(v.linkWorksAfterMs ?? 0)}`}: ferry reads each link right after listing it`),
    line('contentRange', f.contentRange, (v: { honoured: boolean; validator: string; mismatch?: string }) =>
      v.honoured
        ? `honoured (${v.validator === 'none' ? 'no ETag or Last-Modified: a continued download is checked by its size and document alone' : `the content named by its ${v.validator === 'etag' ? 'ETag' : 'Last-Modified'}`}): a pull killed part-way continues from the bytes it kept`
        : `not honoured${v.mismatch ? ` (${v.mismatch})` : ' (the whole content came)'}: a pull killed part-way downloads the file again`),
    line('pageCap', f.pageCap, (v: { cap: number | null; checkedUpTo: number }) => (v.cap === null ? `none seen up to ${v.checkedUpTo}` : `${v.cap} items a page whatever is asked: ferry follows totalCount, not page length; recorded as the profile's pageSize, no list asks for more`)),
    line('listingLagMs', f.listingLagMs, (v: { worstMs: number; suggested: string }) => (v.suggested === '0' ? `${v.worstMs} ms: lists at once; --listing-lag 0 is right` : `${v.worstMs} ms: set --listing-lag ${v.suggested}`)),
    line('dateAddedResolutionMs', f.dateAddedResolutionMs, (v: { ms: number; samples: number }) => `${v.ms} ms (from ${v.samples} times)${v.ms >= 1000 ? ': records made within one tick share a time, and the lease decides between them by the service\'s order' : ''}`),
    line('search', f.search, (v: { match: string; caseSensitive: boolean }) => `${v.match} match, ${v.caseSensitive ? 'case-sensitive' : 'case-insensitive'}: the lease finds its records by their whole name`),
    line('metadataRoundTrip', f.metadataRoundTrip, (v: { kept: string }) => (v.kept === 'kept' ? 'kept, non-ASCII and 1 KiB values included: ferry recognises its documents' : `${v.kept}: ferry cannot recognise its documents by their metadata; a fresh store re-uploads`)),
    line('formOrder', f.formOrder, (v: { order: string }) =>
      v.order === 'any' ? 'fields after the file are read: ferry hashes a large file as it sends it (formOrder: any in the profile)' : 'fields after the file are not read: ferry hashes each file before sending it (formOrder: fields-first, the default)'),
    line('dateCompleted', f.dateCompleted, (v: { when: string }) => (v.when === 'at-patch' ? 'set at the PATCH, while documents still process: ferry upload waits for every document it sent' : 'set once nothing of the upload processes')),
    line('streamFormat', f.streamFormat, (v: { format: string }) => (v.format === 'events' ? 'events ending with the Message' : v.format === 'json' ? 'plain JSON: ferry reads the Message as is' : 'events without the Message: ferry reads the reply back from the chat')),
    `matches: ferry emulator ${r.matches || '(the defaults)'}`,
    `scratch: ${r.scratch.created} made, ${r.scratch.removed} removed${r.scratch.leftoversRemoved ? `, ${r.scratch.leftoversRemoved} left by an earlier probe removed` : ''}`,
  ];
}
