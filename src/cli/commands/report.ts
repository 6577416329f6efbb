// `ferry report`: what a batch did, its failure reasons explained.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { Option, type Command } from 'commander';
import { later } from '../later.js';
import { REPORT_FORMATS } from '../../report/render.js';

export function registerReport(program: Command): void {
  program
    .command('report')
    .description("what a batch did (a playbook's upload, a mirror's or a migration's): totals, failure reasons explained, file types and the refused files with their local paths")
    .option('--upload <id>', "the batch: a playbook document upload, or the uploadIdentifier of a mirror's documents")
    .option('--run <n>', 'the batch of this run of the checkpoint store (a number, or last)')
    .option('--playbook <id>', "the playbook, for a playbook's batch this checkpoint store did not make")
    .option('--project <id>', "the project (id or name), for a mirror's batch this checkpoint store did not make (any store, or none)")
    .addOption(new Option('--format <format>', 'output format (default: from the --out extension, else text); md is markdown').choices([...REPORT_FORMATS, 'md']))
    .option('--json', 'print one JSON object on stdout: the report inside it, or with --out where it was written')
    .option('--out <file>', 'write to a file instead of stdout')
    .option('--state <file>', 'checkpoint database')
    .action(later(() => import('../actions/report.js'), 'reportAction'));
}
