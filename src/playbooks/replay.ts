// Import by replay: a playbook recreated call by call in any tenant (the cross-region path), from
// an archive already checked whole. Everything that must be resolved on the target (organization
// metadata definitions) is resolved before the first write; then objects are created parents
// first, each through the id map (exactly once across crashes), and every rich-text tree is
// rewritten to the new ids of the objects it refers to.
import { basename } from 'node:path';
import type { FerryClient } from '../api/client.js';
import { ConfigurationError } from '../api/errors.js';
import type { RichTextNode } from '../api/types.js';
import { TargetMetadata, type MetadataMapping } from '../mapping/metadata.js';
import { listedProof, type JobContext } from '../runner/job.js';
import type { Listed } from '../api/listed.js';
import { countParts, rewriteIds, type ArchiveAssembly } from './format.js';
import type { IdMap, MapOutcome } from '../mapping/id-map.js';
import type { OpenedArchive } from './read.js';
import { findReplayed } from './compare.js';

/** `--map FILE`: target ids for what the archive names, by old id or by name. */
export type ReplayMapping = MetadataMapping;

/** Settling looks back this far before an intent's time: the service's clock may run behind ours. */
const CLOCK_SLACK_MS = 5 * 60_000;

export interface ReplayResult {
  playbookIdentifier: string;
  /** Options created on the target because it lacked them. */
  optionsCreated: string[];
}

export async function replayImport(archive: OpenedArchive, client: FerryClient, ids: IdMap, ctx: JobContext, mapping: ReplayMapping = {}): Promise<ReplayResult> {
  const doc = archive.playbook;
  // Each part is looked for before it is made: "not there" read from listings that show every earlier run's writes.
  const listed = listedProof(ctx);
  const target = new TargetMetadata(client, ids, mapping);
  // Reads only, before any write: a definition the target lacks stops the import here.
  await target.resolve(doc.metadata);
  const count = (outcome: MapOutcome, n = 1) => {
    if (outcome === 'created') ctx.counts.uploaded += n;
    else ctx.counts.reconciled += n;
  };
  const metadata = await target.inputs(doc.metadata);

  // The playbook, with its metadata values in the same call.
  const p = doc.playbook;
  // A store that never replayed this archive: the target may hold it already, made by another
  // store. Found whole (equal to the archive), it is taken as it is and nothing is written.
  if (!ids.get('playbook', p.objectIdentifier)) {
    const found = await findReplayed(client, archive, ids.claimed(), ctx.signal);
    if (found) {
      ids.adopt('playbook', p.objectIdentifier, found);
      count('existing', Object.values(countParts(doc)).reduce((a, b) => a + b, 0));
      return { playbookIdentifier: found, optionsCreated: target.optionsCreated };
    }
  }
  const made = await ids.ensure(
    'playbook',
    p.objectIdentifier,
    async () => (await client.playbooks.create({ name: p.name as string, description: p.description, isPrivate: p.isPrivate, organizationWide: p.organizationWide, metadata })).objectIdentifier,
    async (since) => {
      const claimed = ids.claimed();
      for await (const found of client.playbooks.searchAll({ searchText: p.name ?? '' })) {
        if (found.name === p.name && !claimed.has(found.objectIdentifier) && Date.parse(found.dateAdded) >= since.getTime() - CLOCK_SLACK_MS) return found.objectIdentifier;
      }
      return undefined;
    },
  );
  const playbook = made.id;
  count(made.outcome);
  const values = await client.playbookMetadata.list(playbook).all();
  for (const v of doc.metadata) {
    const def = target.definition(v);
    const value = values.find((x) => x.metadata?.objectIdentifier === def.id);
    if (value) ids.note(v.objectIdentifier, value.objectIdentifier);
  }
  count(made.outcome, doc.metadata.length);

  for (const m of doc.referenceMaterials) {
    signalCheck(ctx);
    const r = await ids.ensure(
      'referenceMaterial',
      m.objectIdentifier,
      async () =>
        (
          await client.referenceMaterials.create(playbook, {
            name: m.name as string,
            description: m.description,
            type: m.type as string,
            booleanValue: m.booleanValue,
            isSourceDocuments: m.isSourceDocuments,
            dateTimeValue: m.dateTimeValue,
            decimalValue: m.decimalValue,
            textValue: m.textValue,
            isLocked: m.isLocked,
            isRequired: m.isRequired,
            categories: m.categories.map((c) => ({ name: c.name })),
          })
        ).objectIdentifier,
      async () => findUnclaimed(client.referenceMaterials.list(playbook), ids, (x) => x.name === m.name && x.type === m.type, listed),
    );
    count(r.outcome);
    const now = await client.referenceMaterials.get(playbook, r.id);
    if (m.stableObjectIdentifier && now.stableObjectIdentifier) ids.note(m.stableObjectIdentifier, now.stableObjectIdentifier);
    for (const c of m.categories) {
      const same = now.categories?.find((x) => x.name === c.name);
      if (same?.objectIdentifier) ids.note(c.objectIdentifier, same.objectIdentifier);
    }
  }

  // Every assembly first, so that trees referring to another assembly can be rewritten.
  const assemblies: { entry: ArchiveAssembly; id: string }[] = [];
  for (const a of doc.assemblies) {
    signalCheck(ctx);
    const r = await ids.ensure(
      'assembly',
      a.objectIdentifier,
      async () => {
        const file = a.file;
        const created = await client.assemblies.create(playbook, {
          name: a.name as string,
          description: a.description ?? '',
          type: a.assemblyType as string,
          ...(a.playbookGroupObjectIdentifier ? { playbookGroupId: a.playbookGroupObjectIdentifier } : {}),
          ...(file ? { file: { open: () => archive.open(file), size: archive.size(file), filename: basename(file) } } : {}),
        });
        return created.objectIdentifier as string;
      },
      async () => findUnclaimed(client.assemblies.list(playbook), ids, (x) => x.name === a.name, listed),
    );
    // The template file travels with its assembly: one call, two parts of the archive.
    count(r.outcome, a.file ? 2 : 1);
    assemblies.push({ entry: a, id: r.id });
  }
  for (const { entry: a, id } of assemblies) {
    signalCheck(ctx);
    // A PUT: repeating it after a crash changes nothing.
    await client.assemblies.updateRichText(playbook, id, rewriteIds(a.richText, ids.ids));
    for (const [reference, columns] of Object.entries(a.templateColumns)) {
      const ref = { playbookIdentifier: playbook, assemblyIdentifier: id, referenceIdentifier: rewriteIds(reference, ids.ids) };
      for (const c of columns) {
        const r = await ids.ensure(
          'templateColumn',
          c.objectIdentifier,
          async () => (await client.templateColumns.create(ref, { name: c.name as string, ...(c.template ? { template: rewriteIds(c.template, ids.ids) as RichTextNode } : {}) })).objectIdentifier as string,
          async () => findUnclaimed(client.templateColumns.list(ref), ids, (x) => x.name === c.name, listed),
        );
        count(r.outcome);
      }
    }
    for (const [condition, items] of Object.entries(a.categoryConditions)) {
      const reference = a.conditionReferences?.[condition];
      if (!reference) throw new ConfigurationError(`assembly "${a.name}": the archive does not say which reference condition ${condition} belongs to`);
      const path = { playbookIdentifier: playbook, assemblyIdentifier: id, referenceIdentifier: rewriteIds(reference, ids.ids), conditionIdentifier: rewriteIds(condition, ids.ids) };
      for (const c of items) {
        const r = await ids.ensure(
          'categoryCondition',
          c.objectIdentifier,
          async () => (await client.categoryConditions.create(path, { fuzzyMatch: c.fuzzyMatch, text: c.text })).objectIdentifier as string,
          async () => findUnclaimed(client.categoryConditions.list(path), ids, (x) => x.text === c.text && (x.fuzzyMatch === true) === c.fuzzyMatch, listed),
        );
        count(r.outcome);
      }
    }
  }
  return { playbookIdentifier: playbook, optionsCreated: target.optionsCreated };
}

/** The first listed item that matches and no other source item claimed; `_settled`: the listing shows every earlier run's writes. */
async function findUnclaimed<T extends { objectIdentifier?: string }>(list: AsyncIterable<T>, ids: IdMap, matches: (item: T) => boolean, _listed: Listed): Promise<string | undefined> {
  const claimed = ids.claimed();
  for await (const item of list) if (item.objectIdentifier && !claimed.has(item.objectIdentifier) && matches(item)) return item.objectIdentifier;
  return undefined;
}

function signalCheck(ctx: JobContext): void {
  ctx.signal.throwIfAborted();
}
