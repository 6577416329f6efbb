// `ferry metadata ls`: the organization metadata definitions a tenant shows, with their ids (what
// a migration's or replay import's --map names). Its definition; the action is in ../actions.
import { type Command } from 'commander';
import { later } from '../later.js';

export function registerMetadata(program: Command): void {
  const metadata = program.command('metadata').description("organization metadata definitions: list them with their ids (what --map of a migration or an import names)");
  metadata
    .command('ls')
    .description("list the definitions the tenant's projects and playbooks carry values of: id, type, name, options, where seen (the interface lists no others)")
    .option('--json', 'print one JSON object, the definitions as items')
    .action(later(() => import('../actions/metadata.js'), 'metadataLsAction'));
}
