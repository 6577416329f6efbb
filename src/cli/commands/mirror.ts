// `ferry mirror SOURCE --project ID`: a folder tree or a zip into a project's documents.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';
import { addTransferOptions } from '../options.js';

export function registerMirror(program: Command): void {
  addTransferOptions(
    program
      .command('mirror')
      .description("mirror a folder tree, a zip or a tar into a project's documents: exactly once, incremental, resumable")
      .argument('<source>', 'a folder, or a zip or tar (.tar, .tar.gz) read in place'),
  )
    .option('--dry-run', 'print the plan (new, changed, unchanged, deleted locally, folders, bytes) and touch nothing')
    .action(later(() => import('../actions/mirror.js'), 'mirrorAction'));
}
