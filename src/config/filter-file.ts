// A filter file (--filter-from, or a job file's filterFrom) read and parsed, or a clear error
// naming where it was given: one reader for the flag and the job file.
import { readFileSync } from 'node:fs';
import { ConfigurationError } from '../errors.js';
import { parseFilterRules, type FilterRule } from '../sync/filter-rules.js';

/** `where` names the file in messages: `--filter-from rules.txt`, `job file j.yaml: filterFrom rules.txt`. */
export function readFilterFile(file: string, where: string): FilterRule[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigurationError(`${where} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return parseFilterRules(text, where);
}
