// `--map FILE` of a replay import: target ids for what an archive names, read and checked whole
// (every mistake named with its field) before anything is imported.
import { readFileSync } from 'node:fs';
import { yaml, zod } from '../libraries.js';
import { ConfigurationError } from '../api/errors.js';
import { formatIssues } from '../config/profile.js';
import type { ReplayMapping } from './replay.js';

/** Built at its first use (../config/libraries.ts). */
function mappingSchema() {
  const { z } = zod();
  return z
    .object({
      organizationMetadata: z.record(z.string(), z.uuid({ message: 'must be a uuid' })).optional(),
      options: z.record(z.string(), z.uuid({ message: 'must be a uuid' })).optional(),
    })
    .strict();
}

export function loadMapping(file: string): ReplayMapping {
  let parsed: unknown;
  try {
    parsed = yaml().parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigurationError(`--map ${file} cannot be read: ${(err as Error).message}`);
  }
  const result = mappingSchema().safeParse(parsed ?? {});
  if (!result.success) throw new ConfigurationError(`--map ${file}: ${formatIssues(result.error)}`);
  return result.data as ReplayMapping;
}

