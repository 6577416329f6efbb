// `ferry upload`: a tree as one upload batch, driven to its end.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';
import { addSettings } from '../settings-flags.js';
import { JOB_SETTINGS } from '../../settings/declared.js';

export function registerUpload(program: Command): void {
  addSettings(
    program
      .command('upload')
      .description('upload a tree as one playbook document upload (a batch), mark it complete, wait for processing and report the failures')
      .argument('<source>', 'a folder, or a zip or tar (.tar, .tar.gz) read in place'),
    JOB_SETTINGS.upload,
  ).action(later(() => import('../actions/upload.js'), 'uploadAction'));
}
