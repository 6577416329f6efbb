// `--project` takes a project's id or its name: a newcomer knows the name ("Contoso onboarding"),
// the service wants the id. A name is looked up in the projects this client sees; one that
// names two is refused listing both (ferry never picks the tenant's project for the user), and
// one that names none points to `ferry ls`. Summaries give the id either way.
import type { FerryClient } from '../../api/client.js';
import { ConfigurationError } from '../../errors.js';
import { isUuid } from '../../ids.js';
import { visible } from '../../text.js';

/** The flag as typed: an id, or a name to look up once a client exists. */
export function projectFlag(flag: string, value: string): string {
  if (value.trim() === '') throw new ConfigurationError(`${flag} is empty: give a project's id or its name (\`ferry ls\` lists them)`);
  return value;
}

/** The project's id: the value itself when it is one, else the one project of that name. */
export async function resolveProject(client: FerryClient, value: string, flag = '--project'): Promise<string> {
  if (isUuid(value)) return value;
  const named: { id: string; date: string }[] = [];
  const near: string[] = [];
  for await (const p of client.projects.list()) {
    if (!p.objectIdentifier) continue;
    if (p.name === value) named.push({ id: p.objectIdentifier, date: p.dateAdded ?? '' });
    else if (p.name && p.name.toLowerCase() === value.toLowerCase()) near.push(p.name);
  }
  if (named.length === 1) return (named[0] as { id: string }).id;
  if (named.length > 1) {
    throw new ConfigurationError(`${flag} "${visible(value)}" names ${named.length} projects: ${named.map((n) => `${n.id}${n.date ? ` (added ${n.date.slice(0, 10)})` : ''}`).join(', ')}; give the id of the one meant`);
  }
  const hint = near.length ? ` (did you mean "${visible(near[0] as string)}"? names are matched exactly)` : '';
  throw new ConfigurationError(`no project this client sees is named "${visible(value)}"${hint}: \`ferry ls\` lists them with their ids`);
}
