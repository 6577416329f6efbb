// `ferry playbooks list|export|import|backup|verify`: playbooks as archives (docs/playbook-archive.md).
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { Option, type Command } from 'commander';
import { later } from '../later.js';
import { addSettings } from '../settings-flags.js';
import { JOB_SETTINGS } from '../../settings/declared.js';

export function registerPlaybooks(program: Command): void {
  const playbooks = program.command('playbooks').description('list, export, import, back up and verify playbooks as zip archives');

  playbooks
    .command('list')
    .description('list the organization\'s playbooks: id, date added, name')
    .option('--search <text>', 'only playbooks the service finds for this text')
    .option('--json', 'print one JSON object whose items are the playbooks (streamed)')
    .action(later(() => import('../actions/ls.js'), 'playbooksListAction'));

  playbooks
    .command('export')
    .description('write playbooks as archives: one .zip for one playbook, or a folder of them')
    .argument('[ids...]', 'playbooks by id or by name')
    .option('--all', 'every playbook of the organization')
    .requiredOption('--out <path>', 'a .zip file (one playbook) or a folder')
    .option('--state <file>', 'checkpoint database')
    .option('--json', 'print one JSON summary on stdout')
    .action(later(() => import('../actions/playbooks.js'), 'exportAction'));

  addSettings(
    playbooks
      .command('import')
      .description('import an archive: on the service (server) or call by call into any tenant (replay)')
      .argument('<file>', 'a playbook archive (.zip), or a folder `ferry playbooks backup` wrote: each playbook from its newest whole archive')
      .addOption(new Option('--mode <mode>', 'server: POST /playbooks/import; replay: recreate call by call (any tenant, any region)').choices(['server', 'replay']).makeOptionMandatory())
      .option('--to-profile <name>', 'the profile of the target tenant (default: the current profile)')
      .option('--map <file>', 'replay: target ids for organization metadata (and options), by old id or name; YAML or JSON')
      .option('--timeout <duration>', 'server: longest wait for the import task', '10m'),
    ['state', 'waitLock', 'lockTtl', 'lock', 'json'],
  ).action(later(() => import('../actions/playbooks.js'), 'importAction'));

  addSettings(
    playbooks.command('backup').description('export every playbook into a folder, keeping a new archive only when it changed, then prune'),
    JOB_SETTINGS['playbooks-backup'],
  ).action(later(() => import('../actions/playbooks.js'), 'backupAction'));

  playbooks
    .command('verify')
    .description('check archives against their manifests: every entry, its size and sha256 (reads only)')
    .argument('<path>', 'an archive, or a folder (every .zip under it)')
    .option('--json', 'print one JSON object on stdout')
    .action(later(() => import('../actions/playbooks.js'), 'verifyAction'));
}
