// `ferry migrate --from P --to P`: projects and playbooks from one tenant into another.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { Option, type Command } from 'commander';
import { later } from '../later.js';
import { addSettings } from '../settings-flags.js';
import { JOB_SETTINGS } from '../../settings/declared.js';

export function registerMigrate(program: Command): void {
  addSettings(
    program
      .command('migrate')
      .description('projects (folders, documents, metadata) and playbooks from one tenant into another: planned, resumable, exactly once, verified')
      .argument('[action]', '"verify": compare source and target only, and list every difference (exit 1 when any exists)'),
    JOB_SETTINGS.migrate,
  )
    // Said, not refused as an unknown flag: a migration carries each document's own metadata.
    .addOption(new Option('--manifest <file>').hideHelp())
    .action(later(() => import('../actions/migrate.js'), 'migrateAction'));
}
