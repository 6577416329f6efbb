// A project recreated in another tenant: name, description and metadata values (definitions and
// options resolved on the target), through the id map, so a resumed migration never creates it
// twice. Also the organization metadata options of every definition the migration touches.
import type { FerryClient } from '../api/client.js';
import type { Project } from '../api/types.js';
import type { IdMap, MapOutcome } from '../mapping/id-map.js';
import { metadataEntry, type TargetMetadata } from '../mapping/metadata.js';

/** Settling looks back this far before an intent's time: the target's clock may run behind ours. */
const CLOCK_SLACK_MS = 5 * 60_000;

export async function copyProject(to: FerryClient, project: Project, ids: IdMap, target: TargetMetadata): Promise<{ id: string; outcome: MapOutcome }> {
  const metadata = await target.inputs((project.metadataValues ?? []).map(metadataEntry));
  return ids.ensure(
    'project',
    project.objectIdentifier,
    async () => (await to.projects.create({ name: project.name, description: project.description, ...(metadata.length ? { metadata } : {}) })).objectIdentifier,
    async (since) => {
      // A create whose answer was lost: the newest unclaimed project of that name made since.
      const claimed = ids.claimed();
      for await (const p of to.projects.list()) {
        if (p.name === project.name && !claimed.has(p.objectIdentifier) && Date.parse(p.dateAdded ?? '') >= since.getTime() - CLOCK_SLACK_MS) return p.objectIdentifier;
      }
      return undefined;
    },
  );
}

/** Every option of a source definition exists on the target (by name; created when missing). */
export async function copyOptions(from: FerryClient, definition: { sourceId: string; name: string | null }, target: TargetMetadata): Promise<{ options: number; created: number }> {
  const def = target.definition({ organizationMetadataIdentifier: definition.sourceId, organizationMetadataName: definition.name });
  const before = target.optionsCreated.length;
  let options = 0;
  for await (const o of from.organizationMetadataOptions.list(definition.sourceId)) {
    options++;
    await target.optionId(def, o.objectIdentifier, o.name ?? null);
  }
  return { options, created: target.optionsCreated.length - before };
}
