// `ferry pull PROJECT DIR`: a project's documents into a local folder.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { Option, type Command } from 'commander';
import { later } from '../later.js';
import { addLimitOptions, addPatternOptions, addSizeAgeOptions, BWLIMIT_HELP, STATS_HELP } from '../options.js';
import { DEFAULT_CONCURRENCY } from '../../runner/adaptive.js';
import { LOCAL_NAMES } from '../../backends/name-rules.js';

export function registerPull(program: Command): void {
  const pull = program
    .command('pull')
    .description("a project's documents into a local folder: tree and names kept, atomic, resumable, incremental")
    .argument('<project>', 'the project: its id, or its name')
    .argument('<dir>', 'the local folder (created when missing)')
    .option('--from <folder>', 'only this folder of the project (path under its root)');
  addPatternOptions(pull)
    .option('--concurrency <n>', 'most downloads at once', String(DEFAULT_CONCURRENCY))
    .option('--bwlimit <rate>', BWLIMIT_HELP);
  addLimitOptions(addSizeAgeOptions(pull))
    .addOption(new Option('--local-names <rules>', "the rules local names are written by: auto probes DIR, windows maps what NTFS, exFAT and SMB shares refuse, posix writes names as they are").choices([...LOCAL_NAMES]).default('auto'))
    .option('--overwrite-changed', 'replace a pulled file changed here since with the project\'s version (default: keep it, name it, exit 1)')
    .option('--backup-dir <dir>', 'with --overwrite-changed: move each replaced file here first, by its path under DIR')
    .option('-n, --dry-run', 'print what would be downloaded and touch nothing')
    .option('--manifest-out <file>', "write a manifest (CSV as Excel opens it: path, then one column per metadata key) that gives the pulled files' documents the same metadata again with mirror --manifest")
    // Said, not refused as an unknown flag: a pull writes a manifest, it does not read one.
    .addOption(new Option('--manifest <file>').hideHelp())
    .option('--state <file>', 'checkpoint database')
    .option('--stats <duration>', STATS_HELP)
    .option('--json', 'print one JSON summary on stdout')
    .action(later(() => import('../actions/pull.js'), 'pullAction'));
}
