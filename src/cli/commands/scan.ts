// `ferry scan SOURCE [--project P]`: before an onboarding, what is there, which files are the same,
// what the service will likely refuse and cost, and the least time a mirror takes. Reads only.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';
import { addSettings } from '../settings-flags.js';
import { OTHER_SETTINGS } from '../../settings/declared.js';

export function registerScan(program: Command): void {
  const scan = program
    .command('scan')
    .description('before a mirror: what a folder, zip or tar holds, its duplicate files, and (with --project) what the service will likely refuse and what it will cost; writes nothing')
    .argument('<source>', 'the local folder, or a zip or tar (.tar, .tar.gz) read in place')
    .option('--project <id>', "the project a mirror would write to (its id, or its name): predictions from what the service did with the project's documents, and the plan against it");
  addSettings(scan, OTHER_SETTINGS.scan)
    .option('--html <file>', 'also write the scan as one self-contained page (charts, sortable tables; nothing fetched)')
    .option('--json', 'print the scan as one JSON object')
    .action(later(() => import('../actions/scan.js'), 'scanAction'));
}
