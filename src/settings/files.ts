// The files a setting names that the job will write: checked before anything is sent, whichever
// door the setting came in by (a flag, a job file).
import { accessSync, constants, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigurationError } from '../errors.js';
import { visible } from '../text.js';

/** A file the command will write: its folder must exist and take files, and it must not be a folder (exit 2 before anything). */
export function writableFile(flag: string, path: string): void {
  const file = resolve(path);
  if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) throw new ConfigurationError(`${flag} ${visible(path)} is a folder: name the file to write`);
  try {
    accessSync(dirname(file), constants.W_OK);
  } catch (err) {
    throw new ConfigurationError(`${flag} ${visible(path)} cannot be written: its folder ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : `is not writable (${(err as NodeJS.ErrnoException).code})`}`);
  }
}
