// The plan of a migration (`ferry migrate --dry-run`): per project the folders, documents and
// bytes, what an earlier run already copied and what cannot be carried with its reason; the
// playbooks; the organization metadata and what would stop the run. Reads only, on both sides.
import { awaitListed } from '../api/listed.js';
import { describeTarget } from '../api/target.js';
import { ConfigurationError } from '../api/errors.js';
import { ProjectSource } from '../backends/project/source.js';
import { planTransfer, type PlannedItem } from '../sync/engine.js';
import { TargetMetadata, type MetadataMapping } from '../mapping/metadata.js';
import { NOT_CARRIED, checkPair, checkSelection, definitionsUsed, documentsKey, migrateJobKey, readIdMap, selectPlaybooks, selectProjects, type MigrateSelection, type PairDeps } from './selection.js';
import { shareOf } from './shard.js';
import { resolveCounterparts } from './counterparts.js';

export interface MigrationPlan {
  from: string;
  to: string;
  projects: {
    source: string;
    name: string | null;
    /** The target project, when an earlier run made it. */
    target: string | null;
    folders: number;
    documents: number;
    bytes: number;
    /** Documents already copied by an earlier run (unchanged since). */
    alreadyCopied: number;
    notCarried: { key: string; reason: string }[];
    notCarriedCount: number;
  }[];
  playbooks: { source: string; name: string | null; target: string | null }[];
  options: { definitions: number; options: number; missingOnTarget: number };
  /** What stops the migration before it writes anything (a definition the target lacks). */
  blockers: string[];
  notCarried: typeof NOT_CARRIED;
  totals: { projects: number; folders: number; documents: number; bytes: number; alreadyCopied: number; notCarried: number; playbooks: number };
}

const MAX_LISTED = 100;

/** A destination a dry run only looks at: no folder made, every entry placed nowhere. */
const LOOK_ONLY = { prepare: async () => undefined, ensureFolder: async () => undefined, place: async () => ({ parentId: null }) };

/** What a migration would do, writing nothing on either side. */
export async function planMigration(
  opts: MigrateSelection & { mapping?: MetadataMapping | undefined; intoExisting?: boolean | undefined },
  deps: PairDeps,
  /** Told of each document the migration would copy, keyed `project name/path` (the dry run lists them). */
  onItem?: (item: PlannedItem) => void,
): Promise<MigrationPlan> {
  checkSelection(opts);
  checkPair(deps, opts);
  const { from, to, store } = deps;
  const jobKey = migrateJobKey(from, to);
  const ids = readIdMap(store, jobKey);
  const projects = shareOf(await selectProjects(from, opts), opts.shard);
  const playbooks = shareOf(await selectPlaybooks(from, opts), opts.shard);
  const plan: MigrationPlan = {
    from: describeTarget(from.target),
    to: describeTarget(to.target),
    projects: [],
    playbooks: playbooks.map((p) => ({ source: p.objectIdentifier, name: p.name, target: ids.get('playbook', p.objectIdentifier) ?? null })),
    options: { definitions: 0, options: 0, missingOnTarget: 0 },
    blockers: [],
    notCarried: NOT_CARRIED,
    totals: { projects: projects.length, folders: 0, documents: 0, bytes: 0, alreadyCopied: 0, notCarried: 0, playbooks: playbooks.length },
  };
  const used = await definitionsUsed(from, projects, playbooks, opts.mapping);
  plan.options.definitions = used.definitions.length;
  const target = new TargetMetadata(to, ids, opts.mapping);
  try {
    await target.resolve(used.values);
    for (const def of used.definitions) {
      const onTarget = target.definition({ organizationMetadataIdentifier: def.sourceId, organizationMetadataName: def.name });
      for await (const o of from.organizationMetadataOptions.list(def.sourceId)) {
        plan.options.options++;
        if (!o.name || !onTarget.options.has(o.name.toLocaleLowerCase('en-US'))) plan.options.missingOnTarget++;
      }
    }
  } catch (err) {
    if (!(err instanceof ConfigurationError)) throw err;
    plan.blockers.push(err.message);
  }
  // Target projects an earlier run made with another store are found by their documents; a
  // same-named project that is not one of them is a blocker.
  // A plan reads the target as the run would: from listings that show what was written before it began.
  const counterparts = await resolveCounterparts(to, projects, ids, opts.intoExisting === true, await awaitListed(to.transport.listingLag, performance.now()));
  plan.blockers.push(...counterparts.blockers);
  for (const project of projects) {
    const docsKey = documentsKey(jobKey, project.objectIdentifier);
    const found = ids.get('project', project.objectIdentifier) ?? counterparts.found.get(project.objectIdentifier);
    // The engine's own dry run over the source project, against a target that is only looked at.
    const prefix = `${project.name ?? project.objectIdentifier}/`;
    const t = await planTransfer({ source: new ProjectSource(from, project.objectIdentifier, { skipFailed: true }), destination: LOOK_ONLY, store, jobKey: docsKey, maxProblems: MAX_LISTED, onItem: onItem && ((item) => onItem({ ...item, key: prefix + item.key })) });
    const p: MigrationPlan['projects'][number] = {
      source: project.objectIdentifier,
      name: project.name,
      target: found ?? null,
      folders: t.folders,
      documents: t.new + t.changed + t.unchanged,
      bytes: t.totalBytes,
      alreadyCopied: t.unchanged,
      notCarried: t.problems,
      notCarriedCount: t.problemCount,
    };
    plan.projects.push(p);
    plan.totals.folders += p.folders;
    plan.totals.documents += p.documents;
    plan.totals.bytes += p.bytes;
    plan.totals.alreadyCopied += p.alreadyCopied;
    plan.totals.notCarried += p.notCarriedCount;
  }
  return plan;
}
