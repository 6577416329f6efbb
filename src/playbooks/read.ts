// Opens a playbook archive someone else may have made, and believes nothing in it until checked.
// Everything is validated before anything is created anywhere: the end record (entry count,
// truncation), every entry's path and type and expansion ratio (the guards the mirror's zip source
// uses), then every entry streamed once against the manifest's size and sha256, then the playbook
// document's shape. Each refusal names the entry and what is wrong with it.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import unzipper from 'unzipper';
import { SourceError } from '../sync/types.js';
import { checkArchive, isSymlink, readEndRecord, ZipRejectedError, type ZipFile } from '../backends/zip/source.js';
import { MANIFEST_PATH, PLAYBOOK_PATH, SUPPORTED_VERSIONS, ARCHIVE_FORMAT, type ArchiveManifest, type ArchivePlaybook } from './format.js';

/** The archive is not one ferry will read (exit 2); `entry` names the entry at fault when there is one. */
export class ArchiveRejectedError extends SourceError {
  constructor(
    message: string,
    readonly entry?: string,
  ) {
    super(message);
  }
}

export interface ArchiveLimits {
  maxEntries: number;
  /** Largest unpacked/packed ratio of an entry over 1 MiB. */
  maxRatio: number;
  maxTotalBytes: number;
  /** Largest manifest.json or playbook.json. */
  maxJsonBytes: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = { maxEntries: 10_000, maxRatio: 200, maxTotalBytes: 8 * 1024 ** 3, maxJsonBytes: 64 * 1024 * 1024 };

export interface OpenedArchive {
  path: string;
  manifest: ArchiveManifest;
  playbook: ArchivePlaybook;
  /** A fresh stream of a verified entry (read again from the file). */
  open(entryPath: string): Readable;
  size(entryPath: string): number;
}

/** Checks `path` whole and returns it opened; throws ArchiveRejectedError saying what is wrong. */
export async function openArchive(path: string, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<OpenedArchive> {
  let files: ZipFile[];
  try {
    const end = await readEndRecord(path);
    if (end.entries > limits.maxEntries) throw new ArchiveRejectedError(`${path} holds ${end.entries} entries, more than the limit of ${limits.maxEntries}`);
    files = (await unzipper.Open.file(path)).files as ZipFile[];
    checkArchive(path, files, { maxEntries: limits.maxEntries, maxRatio: limits.maxRatio, maxTotalBytes: limits.maxTotalBytes }, 'nothing was created');
  } catch (err) {
    if (err instanceof ArchiveRejectedError) throw err;
    if (err instanceof ZipRejectedError) throw new ArchiveRejectedError(err.message);
    throw new ArchiveRejectedError(`${path} is not a readable zip archive: ${(err as Error).message}`);
  }
  const byPath = new Map<string, ZipFile>();
  for (const file of files) {
    if (file.type === 'Directory') continue;
    if (isSymlink(file)) throw new ArchiveRejectedError(`${path} was refused: entry "${file.path}" is a symbolic link; nothing was created`, file.path);
    if (byPath.has(file.path)) throw new ArchiveRejectedError(`${path} was refused: entry "${file.path}" occurs twice; nothing was created`, file.path);
    byPath.set(file.path, file);
  }

  const manifestFile = byPath.get(MANIFEST_PATH);
  if (!manifestFile) throw new ArchiveRejectedError(`${path} is not a playbook archive: it has no ${MANIFEST_PATH}`, MANIFEST_PATH);
  const manifest = parseJson<ArchiveManifest>(await readSmall(path, manifestFile, limits.maxJsonBytes), MANIFEST_PATH, path);
  checkHeader(manifest, MANIFEST_PATH, path);
  if (!Array.isArray(manifest.entries)) throw new ArchiveRejectedError(`${path}: ${MANIFEST_PATH} has no entry list`, MANIFEST_PATH);

  const declared = new Map<string, { size: number; sha256: string }>();
  for (const e of manifest.entries) {
    if (!e || typeof e.path !== 'string' || typeof e.size !== 'number' || typeof e.sha256 !== 'string') throw new ArchiveRejectedError(`${path}: ${MANIFEST_PATH} has a malformed entry: ${JSON.stringify(e).slice(0, 200)}`, MANIFEST_PATH);
    // Listed twice, the entry would be checked against one line and read by another.
    if (declared.has(e.path)) throw new ArchiveRejectedError(`${path}: ${MANIFEST_PATH} lists entry "${e.path}" more than once`, e.path);
    declared.set(e.path, { size: e.size, sha256: e.sha256 });
  }
  for (const entryPath of byPath.keys()) {
    if (entryPath !== MANIFEST_PATH && !declared.has(entryPath)) throw new ArchiveRejectedError(`${path}: entry "${entryPath}" is not listed in the manifest`, entryPath);
  }
  let playbookText: Buffer | undefined;
  for (const [entryPath, want] of declared) {
    const file = byPath.get(entryPath);
    if (!file) throw new ArchiveRejectedError(`${path}: entry "${entryPath}" is listed in the manifest but missing from the archive`, entryPath);
    if (file.uncompressedSize > want.size) throw new ArchiveRejectedError(`${path}: entry "${entryPath}" is larger than declared (${file.uncompressedSize} bytes, the manifest says ${want.size})`, entryPath);
    const keep = entryPath === PLAYBOOK_PATH;
    const got = await digest(path, file, want.size, keep ? limits.maxJsonBytes : Infinity);
    if (got.size !== want.size) throw new ArchiveRejectedError(`${path}: entry "${entryPath}" holds ${got.size} bytes, the manifest says ${want.size}`, entryPath);
    if (got.sha256 !== want.sha256) throw new ArchiveRejectedError(`${path}: entry "${entryPath}" fails its checksum (sha256 ${got.sha256}, the manifest says ${want.sha256})`, entryPath);
    if (keep) playbookText = got.data;
  }
  if (!playbookText) throw new ArchiveRejectedError(`${path} is not a playbook archive: it has no ${PLAYBOOK_PATH}`, PLAYBOOK_PATH);
  const playbook = parseJson<ArchivePlaybook>(playbookText, PLAYBOOK_PATH, path);
  checkHeader(playbook, PLAYBOOK_PATH, path);
  checkPlaybook(playbook, declared, path);
  return {
    path,
    manifest,
    playbook,
    open: (entryPath) => (byPath.get(entryPath) as ZipFile).stream(),
    size: (entryPath) => declared.get(entryPath)?.size ?? 0,
  };
}

function checkHeader(doc: { format?: unknown; version?: unknown }, entry: string, path: string): void {
  if (doc?.format !== ARCHIVE_FORMAT) throw new ArchiveRejectedError(`${path}: ${entry} is not a ferry playbook archive ("format" is ${JSON.stringify(doc?.format)}, expected "${ARCHIVE_FORMAT}")`, entry);
  if (!SUPPORTED_VERSIONS.includes(doc.version as number)) {
    throw new ArchiveRejectedError(`${path}: ${entry} says archive format version ${JSON.stringify(doc.version)}, which this ferry does not read (it reads version ${SUPPORTED_VERSIONS.join(', ')}); upgrade ferry to read it`, entry);
  }
}

/** The shape the importers rely on; anything else is refused before a single call is made. */
function checkPlaybook(p: ArchivePlaybook, declared: Map<string, unknown>, path: string): void {
  const fail = (what: string) => {
    throw new ArchiveRejectedError(`${path}: ${PLAYBOOK_PATH} ${what}`, PLAYBOOK_PATH);
  };
  if (!p.playbook || typeof p.playbook !== 'object' || typeof p.playbook.name !== 'string' || p.playbook.name === '') fail('has no playbook name');
  for (const key of ['metadata', 'referenceMaterials', 'assemblies'] as const) if (!Array.isArray(p[key])) fail(`has no ${key} list`);
  const ids = new Set<string>();
  const unique = (id: unknown, where: string) => {
    if (typeof id !== 'string' || id === '') fail(`${where} has no objectIdentifier`);
    if (ids.has(id as string)) fail(`${where} repeats the id ${String(id)}`);
    ids.add(id as string);
  };
  p.metadata.forEach((m, i) => unique(m.objectIdentifier, `metadata[${i}]`));
  p.referenceMaterials.forEach((m, i) => {
    unique(m.objectIdentifier, `referenceMaterials[${i}]`);
    if (typeof m.name !== 'string' || typeof m.type !== 'string') fail(`referenceMaterials[${i}] needs a name and a type`);
  });
  p.assemblies.forEach((a, i) => {
    unique(a.objectIdentifier, `assemblies[${i}]`);
    if (typeof a.name !== 'string' || typeof a.assemblyType !== 'string') fail(`assemblies[${i}] needs a name and an assemblyType`);
    if (a.file !== undefined && !declared.has(a.file)) fail(`assemblies[${i}] names the file "${a.file}", which the archive does not hold`);
    if (!a.richText || typeof a.richText !== 'object') fail(`assemblies[${i}] has no rich-text tree`);
    for (const [key, list] of [...Object.entries(a.templateColumns ?? {}), ...Object.entries(a.categoryConditions ?? {})]) {
      if (!Array.isArray(list)) fail(`assemblies[${i}] has a malformed list under ${key}`);
      list.forEach((item, j) => unique(item.objectIdentifier, `assemblies[${i}] ${key}[${j}]`));
    }
  });
}

async function readSmall(path: string, file: ZipFile, max: number): Promise<Buffer> {
  if (file.uncompressedSize > max) throw new ArchiveRejectedError(`${path}: entry "${file.path}" is larger than ${max} bytes`, file.path);
  return (await digest(path, file, max, max)).data;
}

/** Streams an entry once: its size and sha256, and its bytes when `keepUpTo` allows. Stops past `declared`. */
async function digest(path: string, file: ZipFile, declared: number, keepUpTo: number): Promise<{ size: number; sha256: string; data: Buffer }> {
  const hash = createHash('sha256');
  const kept: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of file.stream() as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > declared) throw new ArchiveRejectedError(`${path}: entry "${file.path}" is larger than declared (more than ${declared} bytes)`, file.path);
      if (size > keepUpTo) throw new ArchiveRejectedError(`${path}: entry "${file.path}" is larger than ${keepUpTo} bytes`, file.path);
      hash.update(chunk);
      if (keepUpTo !== Infinity) kept.push(chunk);
    }
  } catch (err) {
    if (err instanceof ArchiveRejectedError) throw err;
    const message = (err as Error).message;
    throw new ArchiveRejectedError(`${path}: entry "${file.path}" cannot be read (${message === 'FILE_ENDED' ? 'the file ends inside it: truncated' : message})`, file.path);
  }
  return { size, sha256: hash.digest('hex'), data: Buffer.concat(kept) };
}

function parseJson<T>(data: Buffer, entry: string, path: string): T {
  try {
    return JSON.parse(data.toString('utf8')) as T;
  } catch (err) {
    throw new ArchiveRejectedError(`${path}: ${entry} is not valid JSON: ${(err as Error).message}`, entry);
  }
}
