// Reads a playbook archive (a zip, see docs/emulator.md "Playbook archive format"), streamed:
// `playbook.json` is parsed and validated, every other file is stored in the blob store as it
// is unpacked. Unknown fields and unreferenced files are ignored, so later versions of the
// format can add to it; a version this reader does not know is refused.
import { createHash, type Hash } from 'node:crypto';
import { Readable } from 'node:stream';
import ajvModule from 'ajv';
import ajvFormatsModule from 'ajv-formats';
import unzipper from 'unzipper';
import type { BlobStore } from '../context.js';
import type { MetadataValueInput } from './metadata-values.js';
import { metadataValueInputSchema } from './metadata-values.js';
import {
  type CategoryConditionInput,
  categoryConditionInputSchema,
  type ReferenceMaterialInput,
  referenceMaterialInputSchema,
  type TemplateColumnInput,
  templateColumnInputSchema,
} from './playbook-inputs.js';
import { declaredConditions, declarations, MAX_JSON_DEPTH, nestingDepth, RICH_TEXT_NODE, type RichTextNode, withRichText } from './rich-text.js';

export const ARCHIVE_FORMAT = 'ferry-playbook';
export const MANIFEST_PATH = 'playbook.json';
export const SUPPORTED_VERSIONS: readonly number[] = [1, 2];
/** Version 2 lists every other entry with its size and sha256 here; they are checked on import. */
export const ENTRY_LIST_PATH = 'manifest.json';

export const ARCHIVE_LIMITS = {
  maxEntries: 10_000,
  maxManifestBytes: 64 * 1024 * 1024,
  /** Unpacked bytes of all files together (a zip bomb stops here). */
  maxTotalBytes: 8 * 1024 ** 3,
};

/** The archive is not a valid playbook archive; the message says why. */
export class ArchiveError extends Error {
  override name = 'ArchiveError';
}

/** A metadata value by definition id or name; category options by id or name too. */
export interface ArchiveMetadataValue extends Omit<MetadataValueInput, 'organizationMetadataIdentifier'> {
  organizationMetadataIdentifier?: string | null;
  organizationMetadataName?: string | null;
  /** Version 2: the option names beside the ids, for a tenant whose option ids differ. */
  singleCategoryName?: string | null;
  categoryNames?: (string | null)[] | null;
}

export interface ArchiveAssembly {
  name: string;
  description: string;
  assemblyType: string;
  playbookGroupObjectIdentifier?: string | null;
  /** Path of the template file inside the archive. */
  file?: string;
  richText?: RichTextNode;
  /** Reference uuid (declared by richText) -> its template columns. */
  templateColumns: Record<string, TemplateColumnInput[]>;
  /** Condition uuid (declared inside a reference of richText) -> its category conditions. */
  categoryConditions: Record<string, CategoryConditionInput[]>;
}

export interface PlaybookManifest {
  format: typeof ARCHIVE_FORMAT;
  version: number;
  playbook: { name: string; description?: string | null; isPrivate: boolean; organizationWide: boolean };
  metadata: ArchiveMetadataValue[];
  referenceMaterials: (ReferenceMaterialInput & { stableObjectIdentifier?: string })[];
  assemblies: ArchiveAssembly[];
}

export interface ArchiveFile {
  blobKey: string;
  size: number;
  sha256: string;
}

export interface PlaybookArchive {
  manifest: PlaybookManifest;
  /** Every file of the archive but the manifest, by path, already in the blob store. */
  files: Map<string, ArchiveFile>;
}

const uuid = { type: 'string', format: 'uuid' };
const uuidKeyedLists = (items: object) => ({ type: 'object', default: {}, propertyNames: uuid, additionalProperties: { type: 'array', items } });

const manifestSchema = withRichText({
  type: 'object',
  required: ['format', 'version', 'playbook'],
  properties: {
    format: { const: ARCHIVE_FORMAT },
    version: { type: 'integer' },
    playbook: {
      type: 'object',
      required: ['name'],
      properties: {
        name: { type: 'string', minLength: 1 },
        description: { type: ['string', 'null'] },
        isPrivate: { type: 'boolean', default: false },
        organizationWide: { type: 'boolean', default: false },
      },
    },
    metadata: {
      type: 'array',
      default: [],
      items: {
        type: 'object',
        properties: {
          ...metadataValueInputSchema.properties,
          organizationMetadataName: { type: ['string', 'null'] },
          singleCategoryIdentifier: { type: ['string', 'null'] },
          categories: { type: ['array', 'null'], items: { type: 'string' } },
          singleCategoryName: { type: ['string', 'null'] },
          categoryNames: { type: ['array', 'null'], items: { type: ['string', 'null'] } },
        },
        anyOf: [
          { required: ['organizationMetadataIdentifier'], properties: { organizationMetadataIdentifier: { type: 'string' } } },
          { required: ['organizationMetadataName'], properties: { organizationMetadataName: { type: 'string' } } },
        ],
      },
    },
    referenceMaterials: {
      type: 'array',
      default: [],
      items: { ...referenceMaterialInputSchema, properties: { ...referenceMaterialInputSchema.properties, stableObjectIdentifier: uuid } },
    },
    assemblies: {
      type: 'array',
      default: [],
      items: {
        type: 'object',
        required: ['name', 'assemblyType'],
        properties: {
          name: { type: 'string', minLength: 1 },
          description: { type: ['string', 'null'], default: '' },
          assemblyType: { type: 'string', minLength: 1 },
          playbookGroupObjectIdentifier: { type: ['string', 'null'], format: 'uuid' },
          file: { type: 'string' },
          richText: RICH_TEXT_NODE,
          templateColumns: uuidKeyedLists(templateColumnInputSchema),
          categoryConditions: uuidKeyedLists(categoryConditionInputSchema),
        },
      },
    },
  },
});

// Both are CommonJS modules that also export themselves as `default`.
const ajv = new ajvModule.default({ useDefaults: true, strict: false });
ajvFormatsModule.default(ajv);
const validateManifest = ajv.compile<PlaybookManifest>(manifestSchema);

/**
 * Unpacks `source` (the zip) entry by entry. Files other than the manifest go to the blob store
 * under `blobKey(n)`; on failure they are deleted again and an ArchiveError says what is wrong.
 */
export async function readPlaybookArchive(
  source: NodeJS.ReadableStream,
  blobs: BlobStore,
  blobKey: (entryNumber: number) => string,
  limits = ARCHIVE_LIMITS,
): Promise<PlaybookArchive> {
  const files = new Map<string, ArchiveFile>();
  try {
    const texts = await unpack(source, limits, async (path, entry, budget) => {
      if (files.has(path)) throw new ArchiveError(`The archive holds ${path} twice.`);
      const key = blobKey(files.size + 1);
      const hash = createHash('sha256');
      const size = await blobs.put(key, Readable.from(hashed(limited(entry, budget, `The archive unpacks to more than ${limits.maxTotalBytes} bytes (at ${path}).`), hash)));
      files.set(path, { blobKey: key, size, sha256: hash.digest('hex') });
      return size;
    });
    const manifestText = texts.get(MANIFEST_PATH);
    if (manifestText === undefined) throw new ArchiveError(`The archive has no ${MANIFEST_PATH} at its root.`);
    const manifest = parseManifest(manifestText);
    if (manifest.version >= 2) checkEntryList(texts.get(ENTRY_LIST_PATH), manifestText, files);
    for (const assembly of manifest.assemblies) assembly.description ??= '';
    checkReferences(manifest, files);
    return { manifest, files };
  } catch (error) {
    for (const file of files.values()) blobs.delete(file.blobKey);
    if (error instanceof ArchiveError) throw error;
    const message = (error as Error).message;
    // unzipper's word for a zip that stops in the middle of an entry.
    throw new ArchiveError(`The archive cannot be read: ${message === 'FILE_ENDED' ? 'it ends unexpectedly (empty or truncated)' : message}.`);
  }
}

/** Refuses entry paths that could point outside the archive's own tree. */
export function checkEntryPath(path: string): void {
  const unsafe =
    path.includes('\0') || /^[/\\]/.test(path) || /^[A-Za-z]:/.test(path) || path.split(/[/\\]/).some((segment) => segment === '..');
  if (unsafe) throw new ArchiveError(`The archive entry ${JSON.stringify(path)} has an unsafe path.`);
}

type StoreEntry = (path: string, entry: unzipper.Entry, budget: number) => Promise<number>;

/** Walks the zip's entries; returns the JSON entries' texts by path, hands every other file to `store`. */
async function unpack(source: NodeJS.ReadableStream, limits: typeof ARCHIVE_LIMITS, store: StoreEntry): Promise<Map<string, string>> {
  const parser = unzipper.Parse({ forceStream: true });
  // unzipper reports a truncated entry on the parser, not on the entry being read: pass it on,
  // or the entry would never end.
  let failure: Error | undefined;
  let current: unzipper.Entry | undefined;
  parser.on('error', (error: Error) => {
    failure = error;
    current?.destroy(error);
  });
  source.on('error', (error: Error) => parser.destroy(error));
  source.pipe(parser);

  const texts = new Map<string, string>();
  let entries = 0;
  let unpackedBytes = 0;
  try {
    for await (const entry of parser as AsyncIterable<unzipper.Entry>) {
      if (failure) throw failure;
      if (++entries > limits.maxEntries) throw new ArchiveError(`The archive holds more than ${limits.maxEntries} entries.`);
      checkEntryPath(entry.path);
      current = entry;
      if (entry.type === 'Directory') {
        await entry.autodrain().promise();
      } else if (entry.path === MANIFEST_PATH || entry.path === ENTRY_LIST_PATH) {
        if (texts.has(entry.path)) throw new ArchiveError(`The archive holds ${entry.path} twice.`);
        texts.set(entry.path, await text(entry, limits.maxManifestBytes));
      } else {
        unpackedBytes += await store(entry.path, entry, limits.maxTotalBytes - unpackedBytes);
      }
      current = undefined;
    }
    if (failure) throw failure;
  } finally {
    // Stops reading the zip when an entry was refused half-way.
    parser.destroy();
    (source as Readable).destroy();
  }
  return texts;
}

async function* hashed(source: AsyncIterable<Buffer>, hash: Hash): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    hash.update(chunk);
    yield chunk;
  }
}

/** Version 2: every entry is listed in manifest.json with its size and sha256, and matches it. */
function checkEntryList(listText: string | undefined, playbookText: string, files: Map<string, ArchiveFile>): void {
  if (listText === undefined) throw new ArchiveError(`A version 2 archive needs ${ENTRY_LIST_PATH}, which this one lacks.`);
  let list: { entries?: { path?: unknown; size?: unknown; sha256?: unknown }[] };
  try {
    list = JSON.parse(listText) as typeof list;
  } catch (error) {
    throw new ArchiveError(`${ENTRY_LIST_PATH} is not valid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(list.entries)) throw new ArchiveError(`${ENTRY_LIST_PATH} has no entries list.`);
  const actual = new Map<string, { size: number; sha256: string }>(files);
  actual.set(MANIFEST_PATH, { size: Buffer.byteLength(playbookText), sha256: createHash('sha256').update(playbookText).digest('hex') });
  const listed = new Set<string>();
  for (const entry of list.entries) {
    const path = String(entry.path);
    listed.add(path);
    const found = actual.get(path);
    if (!found) throw new ArchiveError(`${ENTRY_LIST_PATH} lists ${path}, which the archive does not hold.`);
    if (found.size !== entry.size || found.sha256 !== entry.sha256) throw new ArchiveError(`The archive entry ${path} does not match its size and sha256 in ${ENTRY_LIST_PATH}.`);
  }
  for (const path of actual.keys()) if (!listed.has(path)) throw new ArchiveError(`The archive entry ${path} is not listed in ${ENTRY_LIST_PATH}.`);
}

async function* limited(entry: AsyncIterable<Buffer>, budget: number, overflow: string): AsyncGenerator<Buffer> {
  let bytes = 0;
  for await (const chunk of entry) {
    bytes += chunk.length;
    if (bytes > budget) throw new ArchiveError(overflow);
    yield chunk;
  }
}

async function text(entry: AsyncIterable<Buffer>, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of entry) {
    bytes += chunk.length;
    if (bytes > maxBytes) throw new ArchiveError(`${MANIFEST_PATH} is larger than ${maxBytes} bytes.`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseManifest(json: string): PlaybookManifest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    throw new ArchiveError(`${MANIFEST_PATH} is not valid JSON: ${(error as Error).message}`);
  }
  const header = parsed as { format?: unknown; version?: unknown } | null;
  if (header?.format !== ARCHIVE_FORMAT) throw new ArchiveError(`${MANIFEST_PATH} must have "format": "${ARCHIVE_FORMAT}".`);
  if (!SUPPORTED_VERSIONS.includes(header.version as number)) {
    throw new ArchiveError(`Archive format version ${JSON.stringify(header.version)} is not supported (supported: ${SUPPORTED_VERSIONS.join(', ')}).`);
  }
  if (nestingDepth(parsed) > MAX_JSON_DEPTH) throw new ArchiveError(`${MANIFEST_PATH} nests deeper than ${MAX_JSON_DEPTH} levels.`);
  if (!validateManifest(parsed)) {
    const problems = (validateManifest.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`.trim());
    throw new ArchiveError(`${MANIFEST_PATH} is invalid: ${problems.join('; ')}`);
  }
  return parsed;
}

/** Files named by the manifest exist (each used once); columns and conditions hang off what the tree declares. */
function checkReferences(manifest: PlaybookManifest, files: Map<string, ArchiveFile>): void {
  const used = new Set<string>();
  manifest.assemblies.forEach((assembly, index) => {
    const where = `assemblies[${index}] (${assembly.name})`;
    if (assembly.file !== undefined) {
      if (!files.has(assembly.file)) throw new ArchiveError(`${where} names the file ${assembly.file}, which the archive does not hold.`);
      if (used.has(assembly.file)) throw new ArchiveError(`${where} names the file ${assembly.file}, which another assembly uses already.`);
      used.add(assembly.file);
    }
    const declared = declarations(assembly.richText ?? null);
    const conditions = declaredConditions(declared);
    for (const reference of Object.keys(assembly.templateColumns)) {
      if (!declared.has(reference)) throw new ArchiveError(`${where} has template columns for reference ${reference}, which its rich text does not declare.`);
    }
    for (const condition of Object.keys(assembly.categoryConditions)) {
      if (!conditions.has(condition)) throw new ArchiveError(`${where} has category conditions for condition ${condition}, which its rich text does not declare.`);
    }
  });
}
