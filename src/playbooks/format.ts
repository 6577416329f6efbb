// The playbook archive, version 2 (docs/playbook-archive.md): what its two JSON entries hold, and
// the few rules every reader and writer of it shares. The emulator reads the same format with its
// own reader (it shares only the contract with ferry).
import type { RichTextNode } from '../api/types.js';

export const ARCHIVE_FORMAT = 'ferry-playbook';
export const ARCHIVE_VERSION = 2;
export const SUPPORTED_VERSIONS: readonly number[] = [2];
export const PLAYBOOK_PATH = 'playbook.json';
export const MANIFEST_PATH = 'manifest.json';

/**
 * Every entry's modification time: fixed, so an unchanged playbook exports to the same bytes.
 * (Zip stores local DOS time; noon keeps the date the same in every time zone.)
 */
export const ENTRY_DATE = new Date(Date.UTC(1980, 0, 1, 12, 0, 0));

export interface ManifestEntry {
  path: string;
  size: number;
  sha256: string;
}

export interface ArchiveManifest {
  format: typeof ARCHIVE_FORMAT;
  version: number;
  source: { baseUrl: string; tenant: string | null; region: string | null };
  playbook: { objectIdentifier: string; name: string | null };
  /**
   * The latest change the archive captures (dates of the playbook and its parts). Not the wall
   * clock: an unchanged playbook must export to identical bytes; the export's own time is in the
   * command's summary and the backup index.
   */
  capturedAt: string | null;
  /** Every other entry, in archive order. */
  entries: ManifestEntry[];
}

import type { ArchiveMetadataValue } from '../mapping/metadata.js';
export type { ArchiveMetadataValue };

export interface ArchiveReferenceMaterial {
  objectIdentifier: string;
  stableObjectIdentifier: string | null;
  name: string | null;
  description: string | null;
  type: string | null;
  booleanValue: boolean | null;
  isSourceDocuments: boolean | null;
  dateTimeValue: string | null;
  decimalValue: number | null;
  textValue: string | null;
  isLocked: boolean;
  isRequired: boolean;
  dateAdded: string | null;
  categories: { objectIdentifier: string; name: string; dateAdded: string | null }[];
}

export interface ArchiveTemplateColumn {
  objectIdentifier: string;
  name: string | null;
  /** Absent when the service gave none. */
  template?: RichTextNode;
}

export interface ArchiveCategoryCondition {
  objectIdentifier: string;
  fuzzyMatch: boolean;
  text: string | null;
}

export interface ArchiveAssembly {
  objectIdentifier: string;
  name: string | null;
  description: string | null;
  assemblyType: string | null;
  playbookGroupObjectIdentifier: string | null;
  dateAdded: string | null;
  dateModified: string | null;
  /** Path of the template file inside the archive; absent when the assembly has none. */
  file?: string;
  richText: RichTextNode;
  /** Reference uuid (from the tree) -> its template columns. */
  templateColumns: Record<string, ArchiveTemplateColumn[]>;
  /** Condition uuid (from the tree, inside a reference) -> its category conditions. */
  categoryConditions: Record<string, ArchiveCategoryCondition[]>;
  /** Condition uuid -> the reference it was read under (the call's path needs one). */
  conditionReferences: Record<string, string>;
}

export interface ArchivePlaybook {
  format: typeof ARCHIVE_FORMAT;
  version: number;
  playbook: { objectIdentifier: string; name: string | null; description: string | null; isPrivate: boolean; organizationWide: boolean; dateAdded: string | null };
  metadata: ArchiveMetadataValue[];
  referenceMaterials: ArchiveReferenceMaterial[];
  assemblies: ArchiveAssembly[];
}

/** The sub-resources an archive holds, by kind: what summaries account for. */
export function countParts(p: ArchivePlaybook): Record<string, number> {
  const columns = p.assemblies.reduce((n, a) => n + Object.values(a.templateColumns).reduce((m, l) => m + l.length, 0), 0);
  const conditions = p.assemblies.reduce((n, a) => n + Object.values(a.categoryConditions).reduce((m, l) => m + l.length, 0), 0);
  return {
    playbook: 1,
    metadata: p.metadata.length,
    referenceMaterials: p.referenceMaterials.length,
    assemblies: p.assemblies.length,
    files: p.assemblies.filter((a) => a.file !== undefined).length,
    templateColumns: columns,
    categoryConditions: conditions,
  };
}

/** A uuid in a rich-text tree that may name a reference, with the uuids nested inside it (conditions). */
export interface TreeUuid {
  uuid: string;
  inside: string[];
}

/**
 * Every `attrs.uuid` of a tree, each with the `attrs.uuid`s of the nodes below it. The spec shows
 * references and conditions only by their paths, not how a tree declares them, so ferry asks the
 * service about each candidate (a 404 means "not one") instead of assuming node type names.
 */
export function treeUuids(tree: RichTextNode | null | undefined): TreeUuid[] {
  const out: TreeUuid[] = [];
  const walk = (node: RichTextNode | undefined, ancestors: TreeUuid[]): void => {
    if (!node || typeof node !== 'object') return;
    const uuid = node.attrs?.uuid;
    let mine: TreeUuid | undefined;
    if (typeof uuid === 'string' && uuid !== '') {
      for (const a of ancestors) if (!a.inside.includes(uuid)) a.inside.push(uuid);
      mine = out.find((t) => t.uuid === uuid);
      if (!mine) {
        mine = { uuid, inside: [] };
        out.push(mine);
      }
    }
    const next = mine ? [...ancestors, mine] : ancestors;
    for (const child of node.content ?? []) walk(child, next);
  };
  walk(tree ?? undefined, []);
  return out;
}

/** A copy of `tree` in which every string equal to a key of `ids` is replaced by its value. */
export function rewriteIds<T>(tree: T, ids: ReadonlyMap<string, string>): T {
  if (typeof tree === 'string') return (ids.get(tree) ?? tree) as T;
  if (Array.isArray(tree)) return tree.map((v) => rewriteIds(v, ids)) as T;
  if (tree && typeof tree === 'object') {
    return Object.fromEntries(Object.entries(tree).map(([k, v]) => [k, rewriteIds(v, ids)])) as T;
  }
  return tree;
}

/** JSON with keys in a fixed order (sorted), so equal content is equal bytes. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value), null, 1);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** A name safe as one path segment inside the archive. */
export function safeSegment(name: string | null | undefined, fallback: string): string {
  const cleaned = (name ?? '').replace(/[\u0000-\u001f\u007f/\\:*?"<>|]/g, '_').replace(/^\.+/, '_').slice(0, 120);
  return cleaned === '' ? fallback : cleaned;
}

const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE_TEXT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/;

/** A value with every id and date replaced by a marker: what must survive a trip between tenants. */
export function comparable(value: unknown): unknown {
  if (typeof value === 'string') return UUID_TEXT.test(value) ? '<id>' : DATE_TEXT.test(value) ? '<date>' : value;
  if (Array.isArray(value)) return value.map(comparable);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [UUID_TEXT.test(k) ? '<id>' : k, comparable(v)]));
  return value;
}
