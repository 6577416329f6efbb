// `ferry mirror SOURCE --project ID`: a folder tree or a zip into a project's documents.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';
import { addSettings } from '../settings-flags.js';
import { JOB_SETTINGS } from '../../settings/declared.js';

export function registerMirror(program: Command): void {
  addSettings(
    program
      .command('mirror')
      .description("mirror a folder tree, a zip or a tar into a project's documents: exactly once, incremental, resumable")
      .argument('<source>', 'a folder, or a zip or tar (.tar, .tar.gz) read in place'),
    JOB_SETTINGS.mirror,
  ).action(later(() => import('../actions/mirror.js'), 'mirrorAction'));
}
