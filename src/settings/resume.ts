// The record a run keeps of its settings, so that `ferry jobs resume N` runs it again as it was:
// exactly the settings declared `resume: true` (declared.ts), written as a job file writes them,
// with the record's version. Read back through the same schema as a job file: no cast.
import { ConfigurationError } from '../errors.js';
import type { JobKind } from './declared.js';
import { getPath, setPath, type Form } from './form.js';
import { jobSettings } from './schema.js';

export const RECORD_VERSION = 1;

/** What a run records: the settings it keeps, in job-file form, and the version of this record. */
export function resumeRecord(kind: JobKind, form: Form): Form {
  const out: Form = { recordVersion: RECORD_VERSION };
  for (const s of jobSettings(kind)) {
    if (!s.resume) continue;
    const value = getPath(form, s.key);
    if (value !== undefined) setPath(out, s.key, value);
  }
  return out;
}

/**
 * A run's record as the job file it stands for: the keys its kind declares (a record also holds
 * what the run made of them, such as the ids a selection came to). Refused when another version of
 * the record wrote it.
 */
export function formOfRecord(kind: JobKind, runId: number, params: Record<string, unknown>): Form {
  const version = params.recordVersion;
  if (version !== RECORD_VERSION) {
    const by = version === undefined ? 'an earlier ferry, whose record of a run is not versioned' : `version ${JSON.stringify(version)} of the run record (this ferry reads ${RECORD_VERSION})`;
    throw new ConfigurationError(`run ${runId} was recorded by ${by}: run its command or job file again instead; it carries on where the run stopped`);
  }
  const declared = new Set(jobSettings(kind).map((s) => s.key.split('.')[0]));
  return Object.fromEntries(Object.entries(params).filter(([key]) => declared.has(key)));
}
