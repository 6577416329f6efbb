// `ferry check SOURCE --project P`: does the project hold exactly what the folder or zip holds?
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';
import { addSettings } from '../settings-flags.js';
import { OTHER_SETTINGS } from '../../settings/declared.js';

export function registerCheck(program: Command): void {
  const check = program
    .command('check')
    .description('compare a local folder, zip or tar with what a project holds, without any checkpoint store (exit 1 on any difference)')
    .argument('[source]', 'the local folder, or a zip or tar (.tar, .tar.gz) read in place (with --job: the job file\'s)');
  // --project is asked for unless a job file names it.
  addSettings(check, OTHER_SETTINGS.check, ['project'])
    .option('--job <file>', "a mirror job file: its source, project, folder, filters, archive and sheet settings, and its profile, as its runs use them")
    .option('--checksum', 'read back the content of documents that carry no fingerprint and compare it')
    .option('--one-way', "only whether the project holds every file of the source: documents only on the service (a renamed or deleted file's, kept for good) are counted, not differences (rclone's check --one-way)")
    .option('--download', "read back every document and compare its bytes, each checked against the sha256 it carries (rclone's check --download)")
    .option('--json', 'print one JSON object with every difference')
    .action(later(() => import('../actions/check.js'), 'checkAction'));
}
