// `ferry projects create NAME`: one request, after a look that the name is not taken (a second
// project of one name would make every `--project NAME` ambiguous). Says the id and the tenant.
import type { Command } from 'commander';
import { ConfigurationError } from '../../api/errors.js';
import { describeTarget } from '../../api/target.js';
import { visible } from '../../text.js';
import { createContext } from '../context.js';
import { Reply } from '../reply.js';
import { EXIT } from '../exit-codes.js';
import { shellWord } from '../shell-words.js';

export async function projectsCreateAction(name: string, opts: { description?: string; json?: boolean }, cmd: Command): Promise<void> {
  if (name.trim() === '') throw new ConfigurationError('a project needs a name that is not empty');
  const { client } = createContext(cmd);
  try {
    for await (const p of client.projects.list()) {
      if (p.name === name) throw new ConfigurationError(`a project named "${visible(name)}" exists already (${p.objectIdentifier}): give another name, or use it with --project ${p.objectIdentifier}`);
    }
    const made = await client.projects.create({ name, description: opts.description ?? '' });
    const id = made.objectIdentifier;
    Reply.to(opts).answer('succeeded', EXIT.ok, { project: { id, name }, target: client.target }, () => `created project "${visible(name)}" (${id}) at ${describeTarget(client.target)}\n  next: ferry mirror SOURCE --project ${shellWord(name)}`);
  } finally {
    await client.close();
  }
}
