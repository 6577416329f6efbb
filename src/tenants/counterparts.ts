// Which target project is a source project's copy, asked of the target itself rather than of a
// checkpoint store (which may be new: another machine, another --state, a fresh container). A
// project ferry created carries no mark of its own (the interface gives projects no free
// metadata), but every document ferry copied into it names its source project
// (ferry.sourceProject): that is the evidence. A same-named project with foreign documents is never
// adopted silently; an empty one holds nothing to mix with, and is.
import type { Listed } from '../api/listed.js';
import type { FerryClient } from '../api/client.js';
import type { Project } from '../api/types.js';
import type { IdMap } from '../mapping/id-map.js';
import { readIdentity } from '../backends/project/identity.js';

export type Evidence = 'documents name the source project' | 'empty' | 'foreign documents';

export interface Counterpart {
  id: string;
  name: string | null;
  evidence: Evidence;
}

/**
 * The target projects named like `source`, each with what its first document says. `_settled`:
 * "no project of that name" and "empty" are read from listings, which must show every earlier
 * run's writes (src/api/listed.ts).
 */
export async function projectCounterparts(to: FerryClient, source: Pick<Project, 'objectIdentifier' | 'name'>, _listed: Listed, targets?: readonly Project[]): Promise<Counterpart[]> {
  const named: Counterpart[] = [];
  for (const p of targets ?? (await to.projects.list({ searchText: source.name ?? '' }).all())) {
    if (p.name !== source.name) continue;
    named.push({ id: p.objectIdentifier, name: p.name, evidence: await evidenceIn(to, p.objectIdentifier, source.objectIdentifier) });
  }
  return named;
}

/**
 * The adoptable counterpart, if one is clear: documents that name the source project, else (with
 * `intoExisting`, or when it is empty) the only project of that name. Otherwise a sentence that
 * says why none is taken, for the plan and the blocker.
 */
export function chooseCounterpart(source: Pick<Project, 'objectIdentifier' | 'name'>, found: readonly Counterpart[], claimed: ReadonlySet<string>, intoExisting: boolean): { id?: string; blocker?: string } {
  const open = found.filter((c) => !claimed.has(c.id));
  const proven = open.find((c) => c.evidence === 'documents name the source project');
  if (proven) return { id: proven.id };
  if (open.length === 0) return {};
  if (open.length === 1 && (intoExisting || open[0]!.evidence === 'empty')) return { id: open[0]!.id };
  const ids = open.map((c) => `${c.id} (${c.evidence})`).join(', ');
  return {
    blocker:
      `the target already has ${open.length === 1 ? 'a project' : `${open.length} projects`} named "${source.name ?? ''}" that no earlier migration of project ${source.objectIdentifier} made: ${ids}; ` +
      (open.length === 1 ? 'give --into-existing to copy into it, or rename it on the target' : 'rename or remove all but one on the target, then give --into-existing'),
  };
}

/**
 * For every project the id map has no target for: the counterpart an earlier run made (from any
 * store), or why none may be taken. Reads only; the run adopts `found`, the plan shows both.
 */
export async function resolveCounterparts(to: FerryClient, projects: readonly Project[], ids: Pick<IdMap, 'get' | 'claimed'>, intoExisting: boolean, listed: Listed): Promise<{ found: Map<string, string>; blockers: string[] }> {
  const found = new Map<string, string>();
  const blockers: string[] = [];
  const unmapped = projects.filter((p) => !ids.get('project', p.objectIdentifier));
  if (unmapped.length === 0) return { found, blockers };
  const targets = await to.projects.list().all();
  const claimed = ids.claimed();
  for (const p of unmapped) {
    const choice = chooseCounterpart(p, await projectCounterparts(to, p, listed, targets), claimed, intoExisting);
    if (choice.blocker) blockers.push(choice.blocker);
    else if (choice.id) {
      found.set(p.objectIdentifier, choice.id);
      claimed.add(choice.id);
    }
  }
  return { found, blockers };
}

/** What the project's first document (folders aside) says of where it came from. */
async function evidenceIn(to: FerryClient, project: string, sourceProject: string): Promise<Evidence> {
  for await (const doc of to.documents.list(project, { flattenList: true, hidePackagedFiles: false, sorting: 'dateAdded', desc: false }, { pageSize: 50 })) {
    if (doc.isDirectory) continue;
    return readIdentity(doc.metadata)?.sourceProject === sourceProject ? 'documents name the source project' : 'foreign documents';
  }
  return 'empty';
}
