// `ferry report`: what a batch did, its failure reasons explained.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { Option, type Command } from 'commander';
import { later } from '../later.js';
import { REPORT_FORMATS } from '../../report/render.js';

export function registerReport(program: Command): void {
  program
    .command('report')
    .description('what a batch did: totals, failure reasons explained, file types and the failed files with their local paths')
    .option('--playbook <id>', 'the playbook (found in the checkpoint store when ferry uploaded the batch)')
    .requiredOption('--upload <id>', 'the playbook document upload (batch)')
    .option('--project <id>', "the batch's project (found in the checkpoint store when ferry uploaded it)")
    .addOption(new Option('--format <format>', 'output format (default: from the --out extension, else text); md is markdown').choices([...REPORT_FORMATS, 'md']))
    .option('--json', 'print one JSON object on stdout: the report inside it, or with --out where it was written')
    .option('--out <file>', 'write to a file instead of stdout')
    .option('--state <file>', 'checkpoint database')
    .action(later(() => import('../actions/report.js'), 'reportAction'));
}
