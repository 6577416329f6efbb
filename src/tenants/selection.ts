// What a migration is about, shared by the run, its plan and its proof: the pair of tenants (its
// job key, its items, its lock), the projects and playbooks selected at the source, the
// organization metadata they use, and what the interface cannot carry at all.
import { isUuid } from '../ids.js';
import { resolveProject } from '../backends/project/named.js';
import type { Shard } from './shard.js';
import type { FerryClient } from '../api/client.js';
import { ConfigurationError, NotFoundError } from '../api/errors.js';
import type { Playbook, Project } from '../api/types.js';
import { findPlaybook } from '../playbooks/export.js';
import { IdMap } from '../mapping/id-map.js';
import type { CheckpointStore } from '../store/types.js';
import { definitionsByName, metadataEntry, type DefinitionRef, type MetadataMapping } from '../mapping/metadata.js';

/** The two tenants of a migration and the checkpoint store that keeps its items and id map. */
export interface PairDeps {
  from: FerryClient;
  to: FerryClient;
  store: CheckpointStore;
}

export interface MigrateSelection {
  projects?: string[] | undefined;
  allProjects?: boolean | undefined;
  playbooks?: string[] | undefined;
  allPlaybooks?: boolean | undefined;
  /** This process's share of the selection (`--shard K/N`): K in 1..N. */
  shard?: Shard | undefined;
  /** Source and target may be the same tenant (a copy inside one tenant). */
  sameTenant?: boolean | undefined;
}

/**
 * A migration writes into another tenant: the same one only when asked (--same-tenant). The same
 * address with the same application is the same tenant (the spec puts the tenant in the host; an
 * emulator or gateway serving several tenants at one address tells them apart by application).
 */
export function checkPair(deps: Pick<PairDeps, 'from' | 'to'>, sel: MigrateSelection): void {
  const host = (c: FerryClient) => new URL(c.transport.address.baseUrl).host.toLowerCase();
  const same = host(deps.from) === host(deps.to) && deps.from.transport.tokens.identity === deps.to.transport.tokens.identity;
  if (!sel.sameTenant && same) {
    throw new ConfigurationError(`--from and --to are the same tenant (${host(deps.from)}, the same application): a migration would copy every project into the tenant it is in; give --same-tenant if that is what you want`);
  }
}

/** What the interface cannot recreate in another tenant: said in every plan and report. */
export const NOT_CARRIED = [
  { what: 'assistants and their messages', why: 'the interface can neither list nor create assistants; their conversations stay in the source tenant' },
  { what: 'notifications', why: 'they belong to users of the source tenant and cannot be created through the interface' },
  { what: 'documents without content', why: 'a document with no url (a failed upload record) has no bytes to carry; each is listed as a skipped item' },
  { what: 'documents whose processing failed', why: 'the target would fail them again (their reason is kept at the source); each is listed as a skipped item with its reason' },
];

/** One pair of tenants, one job: its items, its id map, its lock. */
export function migrateJobKey(from: FerryClient, to: FerryClient): string {
  const side = (c: FerryClient) => `${c.transport.address.baseUrl}#${c.transport.tokens.identity}`;
  return `migrate|${side(from)}|${side(to)}`;
}

export function documentsKey(jobKey: string, sourceProject: string): string {
  return `${jobKey}|documents|${sourceProject}`;
}

/** The id map of a migration (projects, options, playbooks and their parts), read only. */
export function readIdMap(store: CheckpointStore, jobKey: string): IdMap {
  return new IdMap(store, `${jobKey}|ids`, 0, '');
}

export async function selectProjects(from: FerryClient, sel: MigrateSelection): Promise<Project[]> {
  if (sel.allProjects) return from.projects.list().all();
  const out: Project[] = [];
  for (const given of sel.projects ?? []) {
    // A name is the one project of that name (two are exit 2 listing both); an id is taken as it is.
    const id = await resolveProject(from, given, '--projects');
    try {
      out.push(await from.projects.get(id));
    } catch (err) {
      if (err instanceof NotFoundError) throw new ConfigurationError(`--projects: the source has no project ${id} (or this application cannot see it)`);
      throw err;
    }
  }
  return out;
}

export async function selectPlaybooks(from: FerryClient, sel: MigrateSelection): Promise<Playbook[]> {
  if (sel.allPlaybooks) return from.playbooks.searchAll().all();
  const out: Playbook[] = [];
  for (const id of sel.playbooks ?? []) out.push(await findPlaybook(from, id));
  return out;
}

export function checkSelection(sel: MigrateSelection): void {
  if (sel.allProjects && sel.projects?.length) throw new ConfigurationError('--projects and --all-projects cannot be given together');
  if (sel.allPlaybooks && sel.playbooks?.length) throw new ConfigurationError('--playbooks and --all-playbooks cannot be given together');
  if (!sel.allProjects && !sel.projects?.length && !sel.allPlaybooks && !sel.playbooks?.length) {
    throw new ConfigurationError('nothing to migrate: name --projects ID,... or --all-projects, and/or --playbooks ID,... or --all-playbooks');
  }
}

/**
 * Every organization metadata definition the selection uses, read at the source, and every one
 * `--map` names (by old id or by name), used or not: a migration carries all options of each.
 * A name the source shows on none of its projects or playbooks cannot be looked up (the interface
 * lists no definitions): it comes back in `unknownNames`.
 */
export async function definitionsUsed(from: FerryClient, projects: Project[], playbooks: Playbook[], mapping: MetadataMapping = {}) {
  const values: DefinitionRef[] = projects.flatMap((p) => (p.metadataValues ?? []).map(metadataEntry));
  for (const p of playbooks) for await (const v of from.playbookMetadata.list(p.objectIdentifier)) values.push(metadataEntry(v));
  const definitions = new Map<string, { sourceId: string; name: string | null }>();
  for (const v of values) if (v.organizationMetadataIdentifier) definitions.set(v.organizationMetadataIdentifier, { sourceId: v.organizationMetadataIdentifier, name: v.organizationMetadataName });
  const usedNames = new Set([...definitions.values()].map((d) => d.name?.toLocaleLowerCase('en-US')));
  let sourceByName: Map<string, string | undefined> | undefined;
  const unknownNames: string[] = [];
  for (const key of Object.keys(mapping.organizationMetadata ?? {})) {
    if (definitions.has(key) || usedNames.has(key.toLocaleLowerCase('en-US'))) continue;
    let sourceId: string | undefined = isUuid(key) ? key : undefined;
    if (!sourceId) {
      // A name the selection does not use: the source's own definitions are looked up by name.
      sourceByName ??= await definitionsByName(from);
      sourceId = sourceByName.get(key.toLocaleLowerCase('en-US'));
      if (!sourceId) {
        // Not an error: a map may cover definitions this source never used. Its options are said
        // not carried (name it by id to carry them).
        unknownNames.push(key);
        continue;
      }
    }
    const ref = { organizationMetadataIdentifier: sourceId, organizationMetadataName: isUuid(key) ? null : key };
    definitions.set(sourceId, { sourceId, name: ref.organizationMetadataName });
    values.push(ref);
  }
  return { values, definitions: [...definitions.values()], unknownNames };
}
