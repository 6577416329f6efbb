// `ferry migrate --from P --to P`: projects and playbooks from one tenant into another.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { Option, type Command } from 'commander';
import { later } from '../later.js';
import { STATS_HELP, BWLIMIT_HELP, addLeaseOptions, addLimitOptions } from '../options.js';
import { DEFAULT_CONCURRENCY } from '../../runner/adaptive.js';

export function registerMigrate(program: Command): void {
  const migrate = withSelection(
    program
      .command('migrate')
      .description('projects (folders, documents, metadata) and playbooks from one tenant into another: planned, resumable, exactly once, verified')
      .argument('[action]', '"verify": compare source and target only, and list every difference (exit 1 when any exists)'),
  )
    .option('--map <file>', 'target ids for organization metadata (and options), by source id or name (YAML)')
    .option('-n, --dry-run', 'print the plan and change nothing')
    .option('--into-existing', 'copy into a same-named target project that no earlier migration of it made (otherwise the run stops and names it)')
    .option('--verify', 'after the migration, compare source and target; exit 1 on any difference')
    // Said, not refused as an unknown flag: a migration carries each document's own metadata.
    .addOption(new Option('--manifest <file>').hideHelp())
    .option('--wait', "after the copies, wait for the target to process this run's documents and name each it refused (exit 1)")
    .option('--timeout <duration>', 'with --wait, the longest wait for processing, e.g. 90s, 30m, 2h (then exit 5)', '1h');
  addLimitOptions(addLeaseOptions(migrate)).action(later(() => import('../actions/migrate.js'), 'migrateAction'));
}

function withSelection(cmd: Command): Command {
  return cmd
    .requiredOption('--from <profile>', 'the profile of the source tenant')
    .requiredOption('--to <profile>', 'the profile of the target tenant')
    .option('--projects <ids>', 'these projects (comma-separated ids)')
    .option('--all-projects', 'every project the source application can see')
    .option('--playbooks <ids>', 'these playbooks (comma-separated ids)')
    .option('--all-playbooks', "every playbook of the source organization")
    .option('--concurrency <n>', 'most documents copied (or compared) at once', String(DEFAULT_CONCURRENCY))
    .option('--bwlimit <rate>', BWLIMIT_HELP)
    .option('--shard <K/N>', "only this process's share of the selection, by project and playbook (K of N; N processes split it exactly)")
    .option('--same-tenant', 'allow --from and --to to be the same tenant (a copy inside one tenant)')
    .option('--state <file>', 'checkpoint database (default: the target profile\'s)')
    .option('--stats <duration>', STATS_HELP)
    .option('--json', 'print one JSON object on stdout');
}
