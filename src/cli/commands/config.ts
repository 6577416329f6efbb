// `ferry config list|show`: the profiles there are, where each points and where its secret comes
// from (never the secret). Its definition; the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';

export function registerConfig(program: Command): void {
  const config = program.command('config').description('the profiles of the config file in use: hosts, client ids, where secrets come from (never the secrets)');
  config
    .command('list')
    .description('one line per profile: name (* the default), host, client id, where its secret comes from')
    .option('--json', 'print one JSON object')
    .action(later(() => import('../actions/config.js'), 'configListAction'));
  config
    .command('show')
    .description('one profile in full (default: the one -p, FERRY_PROFILE or the file\'s default picks), and the FERRY_* variables that would change it')
    .argument('[name]', 'the profile')
    .option('--json', 'print one JSON object')
    .action(later(() => import('../actions/config.js'), 'configShowAction'));
}
