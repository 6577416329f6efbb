// Organization metadata from one tenant resolved in another: the part a replay import of a
// playbook and a migration of projects share. Definitions cannot be created or listed through the
// interface, so each is found on the target by the mapping file (old id or name), by the same id,
// or by name as seen on the target's playbooks and projects; what stays unresolved stops the work
// before any write. Options are matched by name and created when missing, through the id map
// (exactly once across crashes).
import type { FerryClient } from '../api/client.js';
import { ConfigurationError, unlessNotFound } from '../api/errors.js';
import type { MetadataValue, MetadataValueInput } from '../api/types.js';
import type { IdMap } from './id-map.js';
import { shellQuote } from '../shell-quote.js';

/** A metadata value as an archive (and a migration) keeps it: option names beside their ids. */
export interface ArchiveMetadataValue {
  objectIdentifier: string;
  organizationMetadataIdentifier: string | null;
  organizationMetadataName: string | null;
  dataType: string | null;
  isYes: boolean | null;
  text: string | null;
  decimalValue: number | null;
  date: string | null;
  singleCategoryIdentifier: string | null;
  singleCategoryName: string | null;
  categories: string[] | null;
  categoryNames: (string | null)[] | null;
}

/** `--map FILE`: target ids for what the source names, by old id or by name. */
export interface MetadataMapping {
  organizationMetadata?: Record<string, string>;
  options?: Record<string, string>;
}

export interface Definition {
  id: string;
  /** Option name (lower case) -> id on the target. */
  options: Map<string, string>;
}

export type DefinitionRef = Pick<ArchiveMetadataValue, 'organizationMetadataIdentifier' | 'organizationMetadataName'>;

export class TargetMetadata {
  private readonly definitions = new Map<string, Definition>();
  private byName: Map<string, string | undefined> | undefined;
  /** Options created on the target because it lacked them. */
  readonly optionsCreated: string[] = [];

  constructor(
    private readonly client: FerryClient,
    private readonly ids: IdMap,
    private readonly mapping: MetadataMapping = {},
  ) {}

  /** Resolves every definition the values name (reads only); one error lists all that are missing. */
  async resolve(values: readonly DefinitionRef[]): Promise<void> {
    const missing: string[] = [];
    const shared: string[] = [];
    for (const v of values) {
      const key = definitionKey(v);
      if (this.definitions.has(key)) continue;
      const found = await this.find(v);
      const said = `"${v.organizationMetadataName ?? '?'}" (${v.organizationMetadataIdentifier ?? 'no id'})`;
      if (found === 'shared') shared.push(said);
      else if (found) this.definitions.set(key, found);
      else missing.push(said);
    }
    if (missing.length || shared.length) {
      // Every one unmatched, at once, with the way to find the ids: definitions are matched by name
      // where the target's projects or playbooks show one; the interface lists none otherwise.
      const profile = this.client.target.profile;
      const ls = `ferry${profile ? ` -p ${shellQuote(profile)}` : ''} metadata ls`;
      const said = [
        ...(missing.length ? [`the target shows no organization metadata named as ${[...new Set(missing)].join(', ')}`] : []),
        ...(shared.length ? [`the target has two or more definitions named as ${[...new Set(shared)].join(', ')}`] : []),
      ];
      throw new ConfigurationError(
        `${said.join('; ')}: name their target ids in --map (organizationMetadata: {"<name or old id>": "<target id>"}); \`${ls}\` lists the definitions the target's projects and playbooks carry, with their ids (one that none carries has its id only on the service's admin pages); every other definition was matched by name; nothing was created`,
      );
    }
  }

  /** The target definition of a value already resolved. */
  definition(v: DefinitionRef): Definition {
    const def = this.definitions.get(definitionKey(v));
    if (!def) throw new Error(`organization metadata ${v.organizationMetadataName ?? v.organizationMetadataIdentifier} was not resolved first`);
    return def;
  }

  /** The target id of an option: mapped, found by name, or created (once). */
  async optionId(def: Definition, oldId: string, name: string | null): Promise<string> {
    const mapped = this.mapping.options?.[oldId];
    if (mapped) return mapped;
    const known = name ? def.options.get(name.toLocaleLowerCase('en-US')) : undefined;
    if (known) {
      this.ids.note(oldId, known);
      return known;
    }
    if (!name) throw new ConfigurationError(`option ${oldId} has no name at the source and no counterpart in --map options`);
    const made = await this.ids.ensure(
      'option',
      oldId,
      async () => (await this.client.organizationMetadataOptions.create(def.id, name)).objectIdentifier,
      async () => {
        for await (const o of this.client.organizationMetadataOptions.list(def.id)) if (o.name === name) return o.objectIdentifier;
        return undefined;
      },
    );
    if (made.outcome === 'created') this.optionsCreated.push(name);
    def.options.set(name.toLocaleLowerCase('en-US'), made.id);
    return made.id;
  }

  /** Values as the target takes them, their definitions and options translated (options made as needed). */
  async inputs(values: readonly ArchiveMetadataValue[]): Promise<(MetadataValueInput & { organizationMetadataIdentifier: string })[]> {
    await this.resolve(values);
    const out: (MetadataValueInput & { organizationMetadataIdentifier: string })[] = [];
    for (const v of values) {
      const def = this.definition(v);
      out.push({
        organizationMetadataIdentifier: def.id,
        isYes: v.isYes,
        text: v.text,
        decimalValue: v.decimalValue,
        date: v.date,
        singleCategoryIdentifier: v.singleCategoryIdentifier ? await this.optionId(def, v.singleCategoryIdentifier, v.singleCategoryName) : null,
        categories: v.categories ? await Promise.all(v.categories.map((c, i) => this.optionId(def, c, v.categoryNames?.[i] ?? null))) : null,
      });
    }
    return out;
  }

  /** The target's definition of a value; `shared` when two of the target's carry its name. */
  private async find(v: DefinitionRef): Promise<Definition | 'shared' | undefined> {
    const name = v.organizationMetadataName ?? undefined;
    const mapped = (v.organizationMetadataIdentifier && this.mapping.organizationMetadata?.[v.organizationMetadataIdentifier]) || (name && this.mapping.organizationMetadata?.[name]) || undefined;
    if (mapped) {
      const options = await this.optionsOf(mapped);
      if (!options) throw new ConfigurationError(`--map sends organization metadata ${name ?? v.organizationMetadataIdentifier} to ${mapped}, which the target does not have`);
      return { id: mapped, options };
    }
    if (v.organizationMetadataIdentifier) {
      const options = await this.optionsOf(v.organizationMetadataIdentifier);
      if (options) return { id: v.organizationMetadataIdentifier, options };
    }
    if (!name) return undefined;
    this.byName ??= await definitionsByName(this.client);
    const lower = name.toLocaleLowerCase('en-US');
    if (this.byName.has(lower) && this.byName.get(lower) === undefined) return 'shared';
    const id = this.byName.get(lower);
    const options = id ? await this.optionsOf(id) : undefined;
    return id && options ? { id, options } : undefined;
  }

  private async optionsOf(definition: string): Promise<Map<string, string> | undefined> {
    const options = await unlessNotFound(this.client.organizationMetadataOptions.list(definition).all());
    return options && new Map(options.filter((o) => o.name).map((o) => [(o.name as string).toLocaleLowerCase('en-US'), o.objectIdentifier]));
  }
}

/** A value as read from the source, in the form the archive keeps it (option names beside ids). */
export function metadataEntry(v: MetadataValue): ArchiveMetadataValue {
  const options = new Map((v.metadata?.options ?? []).map((o) => [o.objectIdentifier, o.name ?? null]));
  return {
    objectIdentifier: v.objectIdentifier,
    organizationMetadataIdentifier: v.metadata?.objectIdentifier ?? null,
    organizationMetadataName: v.metadata?.name ?? null,
    dataType: v.metadata?.dataType ?? null,
    isYes: v.isYes ?? null,
    text: v.text ?? null,
    decimalValue: v.decimalValue ?? null,
    date: v.date ?? null,
    singleCategoryIdentifier: v.singleCategoryIdentifier ?? null,
    singleCategoryName: v.singleCategoryIdentifier ? (options.get(v.singleCategoryIdentifier) ?? null) : null,
    categories: v.categories ?? null,
    categoryNames: v.categories ? v.categories.map((c) => options.get(c) ?? null) : null,
  };
}

export function definitionKey(v: DefinitionRef): string {
  return v.organizationMetadataIdentifier ?? `name:${v.organizationMetadataName ?? ''}`;
}

/** A definition as the interface shows it: only through the values that projects and playbooks carry. */
export interface SeenDefinition {
  id: string;
  name: string | null;
  dataType: string | null;
  /** How many projects and playbooks carry a value of it. */
  projects: number;
  playbooks: number;
}

/**
 * Every definition a tenant's projects and playbooks carry a value of, by id. The interface has no
 * listing of definitions: one that nothing carries is not seen (its id is on the service's admin pages).
 */
export async function seenDefinitions(client: FerryClient): Promise<Map<string, SeenDefinition>> {
  const seen = new Map<string, SeenDefinition>();
  const add = (m: { name?: string | null; objectIdentifier?: string; dataType?: string | null } | undefined, on: 'projects' | 'playbooks') => {
    if (!m?.objectIdentifier) return;
    const d = seen.get(m.objectIdentifier) ?? { id: m.objectIdentifier, name: m.name ?? null, dataType: m.dataType ?? null, projects: 0, playbooks: 0 };
    d[on] += 1;
    seen.set(d.id, d);
  };
  // Each definition counted once per project or playbook, however many of its values that carries.
  const once = (values: Iterable<MetadataValue>, on: 'projects' | 'playbooks') => {
    const here = new Map<string, MetadataValue['metadata']>();
    for (const v of values) if (v.metadata?.objectIdentifier) here.set(v.metadata.objectIdentifier, v.metadata);
    for (const m of here.values()) add(m, on);
  };
  for await (const project of client.projects.list()) once(project.metadataValues ?? [], 'projects');
  for await (const playbook of client.playbooks.searchAll()) once(await client.playbookMetadata.list(playbook.objectIdentifier).all(), 'playbooks');
  return seen;
}

/**
 * Definition names seen on a tenant's playbooks and projects, lower case -> id. A name two
 * definitions share maps to no id: matching by it would pick one of them at random.
 */
export async function definitionsByName(client: FerryClient): Promise<Map<string, string | undefined>> {
  const found = new Map<string, string | undefined>();
  for (const d of (await seenDefinitions(client)).values()) {
    if (!d.name) continue;
    const key = d.name.toLocaleLowerCase('en-US');
    found.set(key, found.has(key) && found.get(key) !== d.id ? undefined : d.id);
  }
  return found;
}
