// `ferry ls [PROJECT[/path]]`: a look around before a job. Its definition (arguments, flags, help);
// the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';

export function registerLs(program: Command): void {
  program
    .command('ls')
    .description('list the projects, or the documents and folders of a project (PROJECT or PROJECT/path/to/folder)')
    .argument('[where]', 'a project id or name, optionally followed by /path/to/a/folder')
    .option('-R, --recursive', 'list everything under the folder, with paths')
    .option('-l, --long', "show each document's metadata too (key=value; …)")
    .option('--json', 'print one JSON object whose items are the entries (streamed: the listing is never held whole)')
    .action(later(() => import('../actions/ls.js'), 'lsAction'));
}
