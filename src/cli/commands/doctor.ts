// `ferry doctor`: checks a profile end to end and prints a verdict.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description('check a profile end to end: addresses, token, clock, a read call per host, permissions')
    .option('--probe-lag', 'measure how late the service lists a new item (makes and removes a canary project; needs a writing client) and say what --listing-lag to set')
    .option('--probe', 'find which answer this service gives to each question its interface leaves open (folder route, content links, page cap, listing lag, time resolution, search, metadata), in a scratch project it makes and removes; says which emulator flags behave the same')
    .option('--probe-link-wait <duration>', 'with --probe: how long after it is handed out a document link is tried again', '60s')
    .option('--playbook <id>', 'with --probe: a playbook it may add a document upload to (and remove it), to find when dateCompleted is set')
    .option('--assistant <project/assistant>', 'with --probe and --model: an assistant it may send one message to, to find what a streamed reply looks like')
    .option('--model <id>', 'with --probe and --assistant: the model for that message')
    .option('--write-profile', "with --probe: record what the profile can hold (listingLag, pageSize, formOrder) in the profile in use, with a comment saying when it was measured")
    .option('--rps <n>', "most requests per second, all calls together (default: the profile's requestsPerSecond)")
    .option('--json', 'print the checks as JSON')
    .action(later(() => import('../actions/doctor.js'), 'doctorAction'));
}
