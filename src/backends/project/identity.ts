// What ferry writes into every document it uploads, so that the service itself remembers what each
// document is: the checkpoint store is a cache, and a run with no store (a fresh container, a
// renamed profile, another machine) recognises its own work by listing the project once.
// All keys sit under `ferry.` (docs/cli.md, "Identity on the service"); the spec leaves the
// metadataJson format open, so a service that keeps no metadata is met with path and size alone.
import type { Document } from '../../api/types.js';

type DocumentMetadataRead = NonNullable<Document['metadata']>[number];

export const IDENTITY_KEYS = {
  /** The path under the project root where ferry put the document, `/`-separated, no leading slash. */
  path: 'ferry.path',
  /** Bytes of the content. */
  size: 'ferry.size',
  /** sha256 of the content, hex (absent where computing it would mean a second download). */
  sha256: 'ferry.sha256',
  /** The source's modification time, milliseconds since the epoch. */
  mtime: 'ferry.mtime',
  /** The document this one was copied from (`ferry migrate`): its objectIdentifier at the source. */
  source: 'ferry.source',
  /** The project that document is in at the source: how a migration knows its own target project again. */
  sourceProject: 'ferry.sourceProject',
  /**
   * The identity of what a manifest row asked the document to carry (src/manifest): a document
   * uploaded again for its metadata alone is a new version, not a copy of the one before.
   */
  attrs: 'ferry.attrs',
} as const;

/** Every key ferry writes starts so; such keys are never carried over as a document's own metadata. */
export const OWN_METADATA = /^ferry\./;

export interface Identity {
  path?: string | undefined;
  size?: number | undefined;
  sha256?: string | undefined;
  mtimeMs?: number | undefined;
  source?: string | undefined;
  sourceProject?: string | undefined;
  attrs?: string | undefined;
}

/** The metadata entries for an identity (absent fields are left out). */
export function identityMetadata(id: Identity): Record<string, string> {
  const out: Record<string, string> = {};
  if (id.path !== undefined) out[IDENTITY_KEYS.path] = id.path;
  if (id.size !== undefined) out[IDENTITY_KEYS.size] = String(id.size);
  if (id.sha256 !== undefined) out[IDENTITY_KEYS.sha256] = id.sha256;
  if (id.mtimeMs !== undefined && Number.isFinite(id.mtimeMs)) out[IDENTITY_KEYS.mtime] = String(Math.trunc(id.mtimeMs));
  if (id.source !== undefined) out[IDENTITY_KEYS.source] = id.source;
  if (id.sourceProject !== undefined) out[IDENTITY_KEYS.sourceProject] = id.sourceProject;
  if (id.attrs !== undefined) out[IDENTITY_KEYS.attrs] = id.attrs;
  return out;
}

/** What a document says of itself; undefined when it carries none of ferry's keys. */
export function readIdentity(metadata: readonly DocumentMetadataRead[] | null | undefined): Identity | undefined {
  if (!metadata?.length) return undefined;
  const id: Identity = {};
  let any = false;
  for (const m of metadata) {
    if (!m.key || m.value === null || m.value === undefined) continue;
    switch (m.key) {
      case IDENTITY_KEYS.path:
        id.path = m.value;
        break;
      case IDENTITY_KEYS.size:
        id.size = wholeNumber(m.value);
        break;
      case IDENTITY_KEYS.sha256:
        if (/^[0-9a-f]{64}$/.test(m.value)) id.sha256 = m.value;
        break;
      case IDENTITY_KEYS.mtime:
        id.mtimeMs = wholeNumber(m.value);
        break;
      case IDENTITY_KEYS.source:
        id.source = m.value;
        break;
      case IDENTITY_KEYS.sourceProject:
        id.sourceProject = m.value;
        break;
      case IDENTITY_KEYS.attrs:
        id.attrs = m.value;
        break;
      default:
        continue;
    }
    any = true;
  }
  return any ? id : undefined;
}

function wholeNumber(text: string): number | undefined {
  return /^-?\d{1,16}$/.test(text) ? Number(text) : undefined;
}
