// Writes one playbook as an archive (docs/playbook-archive.md): everything reachable from it,
// read through the client and streamed into a zip built by archiver. Template files go from the
// response straight into the zip, one at a time, hashed on the way; the zip is written under a
// temporary name and renamed into place only when complete.
import { lookUntilListed } from '../api/listed.js';
import type archiver from 'archiver';
import { archiver as loadArchiver } from '../libraries.js';
import { createHash } from 'node:crypto';
import { rename, rm } from 'node:fs/promises';
import { besideName, newFileStream } from '../backends/own-files.js';
import { visible } from '../text.js';
import { isUuid } from '../ids.js';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FerryClient } from '../api/client.js';
import { ConfigurationError, unlessNotFound } from '../api/errors.js';
import type { Assembly, Playbook, ReferenceMaterial, RichTextNode } from '../api/types.js';
import { metadataEntry } from '../mapping/metadata.js';
import {
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  ENTRY_DATE,
  MANIFEST_PATH,
  PLAYBOOK_PATH,
  canonicalJson,
  countParts,
  safeSegment,
  treeUuids,
  type ArchiveAssembly,
  type ArchiveManifest,
  type ArchivePlaybook,
  type ArchiveReferenceMaterial,
  type ManifestEntry,
} from './format.js';

export interface ExportResult {
  playbookIdentifier: string;
  name: string | null;
  path: string;
  /** sha256 of the zip file. */
  sha256: string;
  /** sha256 of the manifest's entry list: equal for equal content, whatever the file's name. */
  contentSha256: string;
  bytes: number;
  /** Sub-resources written, by kind. */
  parts: Record<string, number>;
}

/**
 * A playbook by id, from the caller's list or, failing that, the organization's search (the
 * interface has no read by id). One made just before the command may not be listed yet: "not
 * found" is said only from a look begun the listing lag after the first.
 */
export async function findPlaybook(client: FerryClient, id: string): Promise<Playbook> {
  if (!isUuid(id)) return playbookNamed(client, id);
  const found = await lookUntilListed(client.transport.listingLag, performance.now(), async () => {
    for await (const p of client.playbooks.list()) if (p.objectIdentifier === id) return p;
    for await (const p of client.playbooks.searchAll()) if (p.objectIdentifier === id) return p;
    return undefined;
  });
  if (!found) throw new ConfigurationError(`playbook ${id} was not found, or this application cannot see it`);
  return found;
}

/**
 * A playbook by its name, as projects are found by theirs (docs/cli.md, *Names and ids*): the one
 * the organization's search gives with exactly that name; two are exit 2 listing both ids.
 */
async function playbookNamed(client: FerryClient, name: string): Promise<Playbook> {
  const named: Playbook[] = [];
  for await (const p of client.playbooks.searchAll({ searchText: name })) if (p.name === name && !named.some((n) => n.objectIdentifier === p.objectIdentifier)) named.push(p);
  if (named.length === 1) return named[0] as Playbook;
  if (named.length > 1) throw new ConfigurationError(`playbook "${visible(name)}" names ${named.length} playbooks: ${named.map((p) => p.objectIdentifier).join(', ')}; give the id of the one meant`);
  throw new ConfigurationError(`no playbook this application sees is named "${visible(name)}" (names are matched exactly): \`ferry playbooks list\` lists them with their ids`);
}

export async function exportPlaybook(client: FerryClient, playbook: Playbook, outPath: string, signal?: AbortSignal): Promise<ExportResult> {
  const id = playbook.objectIdentifier;
  const temp = `${besideName(outPath)}.partial`;
  const archive = loadArchiver()('zip', { zlib: { level: 6 } });
  const out = newFileStream(temp);
  const zipHash = createHash('sha256');
  let bytes = 0;
  const written = pipeline(archive, new PassThrough().on('data', (c: Buffer) => {
    zipHash.update(c);
    bytes += c.length;
  }), out);
  // The archive fails the pipeline on its own errors; keep them from surfacing twice.
  written.catch(() => undefined);
  try {
    const entries: ManifestEntry[] = [];
    const [metadata, materials, assemblyList] = await Promise.all([
      client.playbookMetadata.list(id).all(),
      client.referenceMaterials.list(id).all(),
      client.assemblies.list(id).all(),
    ]);
    const assemblies: ArchiveAssembly[] = [];
    for (const [index, assembly] of assemblyList.entries()) {
      signal?.throwIfAborted();
      assemblies.push(await exportAssembly(client, id, assembly, index + 1, archive, entries));
    }
    const document: ArchivePlaybook = {
      format: ARCHIVE_FORMAT,
      version: ARCHIVE_VERSION,
      playbook: {
        objectIdentifier: id,
        name: playbook.name,
        description: playbook.description ?? null,
        isPrivate: playbook.isPrivate,
        organizationWide: playbook.organizationWide,
        dateAdded: playbook.dateAdded ?? null,
      },
      metadata: metadata.map(metadataEntry),
      referenceMaterials: materials.map(materialEntry),
      assemblies,
    };
    const playbookJson = Buffer.from(canonicalJson(document));
    await appendBuffer(archive, PLAYBOOK_PATH, playbookJson);
    entries.push({ path: PLAYBOOK_PATH, size: playbookJson.length, sha256: sha256(playbookJson) });

    const manifest: ArchiveManifest = {
      format: ARCHIVE_FORMAT,
      version: ARCHIVE_VERSION,
      source: sourceOf(client.transport.address.baseUrl),
      playbook: { objectIdentifier: id, name: playbook.name },
      capturedAt: latest([playbook.dateAdded, ...materials.map((m) => m.dateAdded), ...assemblyList.flatMap((a) => [a.dateAdded, a.dateModified])]),
      entries,
    };
    await appendBuffer(archive, MANIFEST_PATH, Buffer.from(canonicalJson(manifest)));
    await archive.finalize();
    await written;
    await rename(temp, outPath);
    return {
      playbookIdentifier: id,
      name: playbook.name,
      path: outPath,
      sha256: zipHash.digest('hex'),
      contentSha256: sha256(Buffer.from(canonicalJson(entries))),
      bytes,
      parts: countParts(document),
    };
  } catch (err) {
    archive.abort();
    await written.catch(() => undefined);
    await rm(temp, { force: true });
    throw err;
  }
}

async function exportAssembly(client: FerryClient, playbook: string, a: Assembly, n: number, archive: archiver.Archiver, entries: ManifestEntry[]): Promise<ArchiveAssembly> {
  const assemblyId = a.objectIdentifier as string;
  const richText = await client.assemblies.richText(playbook, assemblyId);
  const entry: ArchiveAssembly = {
    objectIdentifier: assemblyId,
    name: a.name ?? null,
    description: a.description ?? null,
    assemblyType: a.assemblyType ?? null,
    playbookGroupObjectIdentifier: a.playbookGroupObjectIdentifier ?? null,
    dateAdded: a.dateAdded ?? null,
    dateModified: a.dateModified ?? null,
    richText,
    templateColumns: {},
    categoryConditions: {},
    conditionReferences: {},
  };
  const file = await contentOf(client, playbook, assemblyId);
  if (file) {
    const path = `assemblies/${String(n).padStart(4, '0')}/${safeSegment(file.name, 'template')}`;
    const hash = createHash('sha256');
    let size = 0;
    const hashed = file.body.pipe(
      new PassThrough().on('data', (c: Buffer) => {
        hash.update(c);
        size += c.length;
      }),
    );
    file.body.once('error', (err) => hashed.destroy(err));
    // Stored, not deflated: templates (.docx, .pdf) are compressed already.
    await append(archive, hashed, path, true);
    entries.push({ path, size, sha256: hash.digest('hex') });
    entry.file = path;
  }
  // Candidates from the tree: a uuid whose template-columns list answers is a reference, and a
  // uuid inside it whose category-conditions list answers is one of its conditions.
  for (const candidate of treeUuids(richText)) {
    const ref = { playbookIdentifier: playbook, assemblyIdentifier: assemblyId, referenceIdentifier: candidate.uuid };
    const columns = await unlessNotFound(client.templateColumns.list(ref).all());
    if (columns === undefined) continue;
    if (columns.length) entry.templateColumns[candidate.uuid] = columns.map((c) => ({ objectIdentifier: c.objectIdentifier as string, name: c.name ?? null, ...(c.template ? { template: c.template as RichTextNode } : {}) }));
    for (const inner of candidate.inside) {
      if (entry.categoryConditions[inner]) continue;
      const conditions = await unlessNotFound(client.categoryConditions.list({ ...ref, conditionIdentifier: inner }).all());
      if (!conditions?.length) continue;
      entry.categoryConditions[inner] = conditions.map((c) => ({ objectIdentifier: c.objectIdentifier as string, fuzzyMatch: c.fuzzyMatch === true, text: c.text ?? null }));
      entry.conditionReferences[inner] = candidate.uuid;
    }
  }
  return entry;
}

/** The template file, or undefined when the assembly has none (404). */
async function contentOf(client: FerryClient, playbook: string, assembly: string): Promise<{ name: string | undefined; body: Readable } | undefined> {
  const response = await unlessNotFound(client.assemblies.content(playbook, assembly));
  if (!response) return undefined;
  return { name: fileNameOf(response.headers['content-disposition']), body: response.body };
}

function fileNameOf(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  const star = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(value);
  if (star?.[1]) {
    try {
      return decodeURIComponent(star[1]);
    } catch {
      /* fall through to the plain parameter */
    }
  }
  return /filename\s*=\s*"((?:[^"\\]|\\.)*)"/.exec(value)?.[1] ?? /filename\s*=\s*([^;]+)/.exec(value)?.[1]?.trim();
}

function materialEntry(m: ReferenceMaterial): ArchiveReferenceMaterial {
  return {
    objectIdentifier: m.objectIdentifier,
    stableObjectIdentifier: m.stableObjectIdentifier ?? null,
    name: m.name,
    description: m.description ?? null,
    type: m.type ?? null,
    booleanValue: m.booleanValue ?? null,
    isSourceDocuments: m.isSourceDocuments ?? null,
    dateTimeValue: m.dateTimeValue ?? null,
    decimalValue: m.decimalValue ?? null,
    textValue: m.textValue ?? null,
    isLocked: m.isLocked === true,
    isRequired: m.isRequired === true,
    dateAdded: m.dateAdded ?? null,
    categories: (m.categories ?? []).map((c) => ({ objectIdentifier: c.objectIdentifier as string, name: c.name as string, dateAdded: c.dateAdded ?? null })),
  };
}

/** Tenant and region when the base URL follows the spec's `api.{tenant}.{region}.<domain>`. */
export function sourceOf(baseUrl: string): ArchiveManifest['source'] {
  const host = new URL(baseUrl).hostname;
  const match = /^api\.([^.]+)\.(uk|us|eu|au|jp)\./.exec(host);
  return { baseUrl, tenant: match?.[1] ?? null, region: match?.[2] ?? null };
}

function latest(dates: (string | null | undefined)[]): string | null {
  let best: string | null = null;
  for (const d of dates) if (d && (best === null || Date.parse(d) > Date.parse(best))) best = d;
  return best;
}

/** Appends and waits until archiver has taken the entry in: one template stream open at a time. */
function append(archive: archiver.Archiver, source: Readable | Buffer, name: string, store = false): Promise<void> {
  return new Promise((resolve, reject) => {
    const onEntry = (data: archiver.EntryData) => {
      if (data.name !== name) return;
      archive.off('entry', onEntry);
      archive.off('error', reject);
      resolve();
    };
    archive.on('entry', onEntry);
    archive.once('error', reject);
    if (!Buffer.isBuffer(source)) source.once('error', reject);
    archive.append(source, { name, date: ENTRY_DATE, mode: 0o644, store });
  });
}

function appendBuffer(archive: archiver.Archiver, name: string, data: Buffer): Promise<void> {
  return append(archive, data, name);
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
