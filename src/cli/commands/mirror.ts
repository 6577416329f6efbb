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
    .option('-n, --dry-run', 'print the plan (new, changed, unchanged, deleted locally, folders, bytes) and touch nothing')
    .option('--wait', "after the uploads, wait for the service to process this run's documents and name each it refused (exit 1)")
    .option('--timeout <duration>', 'with --wait, the longest wait for processing, e.g. 90s, 30m, 2h (then exit 5)', '1h')
    .action(later(() => import('../actions/mirror.js'), 'mirrorAction'));
}
