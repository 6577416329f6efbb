// `ferry pull PROJECT DIR`: a project's documents into a local folder.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { Option, type Command } from 'commander';
import { later } from '../later.js';
import { addSettings } from '../settings-flags.js';
import { JOB_SETTINGS } from '../../settings/declared.js';

export function registerPull(program: Command): void {
  addSettings(
    program
      .command('pull')
      .description("a project's documents into a local folder: tree and names kept, atomic, resumable, incremental")
      .argument('<project>', 'the project: its id, or its name')
      .argument('<dir>', 'the local folder (created when missing)'),
    JOB_SETTINGS.pull,
  )
    // Said, not refused as an unknown flag: a pull writes a manifest, it does not read one.
    .addOption(new Option('--manifest <file>').hideHelp())
    .action(later(() => import('../actions/pull.js'), 'pullAction'));
}
