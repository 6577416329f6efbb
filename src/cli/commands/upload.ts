// `ferry upload`: a tree as one upload batch, driven to its end.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { Option, type Command } from 'commander';
import { later } from '../later.js';
import { addTransferOptions } from '../options.js';

export function registerUpload(program: Command): void {
  addTransferOptions(
    program
      .command('upload')
      .description('upload a tree as one playbook document upload (a batch), mark it complete, wait for processing and report the failures')
      .argument('<source>', 'a folder, or a zip or tar (.tar, .tar.gz) read in place'),
  )
    .requiredOption('--playbook <id>', 'the playbook the batch belongs to')
    .option('--name <name>', 'name of the batch (default: the folder name and the date)')
    .option('--no-wait', 'mark the batch complete and return without waiting for processing')
    .option('--timeout <duration>', 'longest wait for processing, e.g. 90s, 30m, 2h', '1h')
    .option('--retry-failed', 'upload files that failed for transient reasons again, into new batches (see docs/cli.md for the policy)')
    .addOption(new Option('--ocr-fallback <strategy>', 'retry ocrPageLimitExceeded files with this OCR strategy').choices(['never', 'detect']))
    .option('--ack', "mark the service's notifications about the batch read")
    .action(later(() => import('../actions/upload.js'), 'uploadAction'));
}
