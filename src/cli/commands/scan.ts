// `ferry scan SOURCE [--project P]`: before an onboarding, what is there, which files are the same,
// what the service will likely refuse and cost, and the least time a mirror takes. Reads only.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';
import { addArchiveOptions, addManifestOptions, addPatternOptions, addSizeAgeOptions, BWLIMIT_HELP } from '../options.js';

export function registerScan(program: Command): void {
  const scan = program
    .command('scan')
    .description('before a mirror: what a folder, zip or tar holds, its duplicate files, and (with --project) what the service will likely refuse and what it will cost; writes nothing')
    .argument('<source>', 'the local folder, or a zip or tar (.tar, .tar.gz) read in place')
    .option('--project <id>', "the project a mirror would write to (its id, or its name): predictions from what the service did with the project's documents, and the plan against it")
    .option('--to <folder>', 'the folder under the project root a mirror would write to');
  addSizeAgeOptions(addManifestOptions(addArchiveOptions(addPatternOptions(scan))))
    .option('--rps <n>', "the requests a second a mirror would keep to (default: the profile's requestsPerSecond)")
    .option('--bwlimit <rate>', BWLIMIT_HELP)
    .option('--html <file>', 'also write the scan as one self-contained page (charts, sortable tables; nothing fetched)')
    .option('--json', 'print the scan as one JSON object')
    .action(later(() => import('../actions/scan.js'), 'scanAction'));
}
