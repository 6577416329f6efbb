// `ferry check SOURCE --project P`: does the project hold exactly what the folder or zip holds?
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';
import { addArchiveOptions, addManifestOptions, addPatternOptions } from '../options.js';

export function registerCheck(program: Command): void {
  const check = program
    .command('check')
    .description('compare a local folder, zip or tar with what a project holds, without any checkpoint store (exit 1 on any difference)')
    .argument('<source>', 'the local folder, or a zip or tar (.tar, .tar.gz) read in place')
    .requiredOption('--project <id>', 'the project to compare with: its id, or its name')
    .option('--to <folder>', 'the folder under the project root the source was mirrored to');
  addManifestOptions(addArchiveOptions(addPatternOptions(check)))
    .option('--checksum', 'read back the content of documents that carry no fingerprint and compare it')
    .option('--json', 'print one JSON object with every difference')
    .action(later(() => import('../actions/check.js'), 'checkAction'));
}
