// The job file's schema, made from the declarations (declared.ts): one key per setting, each held
// by its kind's reader and range, so that a job file takes what the flag takes and says what is
// wrong with the same words. Strict: a key no setting declares is an error (with the nearest key).
import type { z as Z } from 'zod';
import { zod } from '../libraries.js';
import { Unreadable } from './kinds.js';
import { JOB_SETTINGS, SETTINGS, type JobKind, type Setting } from './declared.js';
import { getPath, outOfRange } from './form.js';

const REASONS = ['outOfMemory', 'unsupportedFileType', 'badFile', 'uploadFailure', 'ocrPageLimitExceeded', 'unknownException', 'insufficientCredits', 'maliciousFile', 'fileScanTimedOut'] as const;

/** The settings a job file of this kind may hold (a flag that stands for another key's value is that key's). */
export function jobSettings(kind: JobKind): Setting[] {
  return (JOB_SETTINGS[kind] as readonly (keyof typeof SETTINGS)[]).map((n) => SETTINGS[n] as Setting).filter((s) => !s.runFlag && s.asForm === undefined);
}

/** The keys a job file of this kind may hold, dotted where nested. */
export function jobKeys(kind: JobKind): string[] {
  return jobSettings(kind).map((s) => s.key);
}

/** Settings whose values zod's own shapes check (and name by element), not their kind's reader. */
function shapedByZod(s: Setting, origin: SchemaOrigin): boolean {
  return s.key === 'retryPolicy.reasons' || kindOf(s, origin).arg === '<ids>';
}

function kindOf(s: Setting, origin: SchemaOrigin) {
  return origin === 'file' ? (s.jobKind ?? s.kind) : s.kind;
}

/** What is wrong with one setting's value, as a job file's error says it; undefined when nothing. */
function valueProblem(s: Setting, value: unknown, origin: SchemaOrigin): string | undefined {
  if (value === undefined) return s.required ? 'required' : undefined;
  try {
    kindOf(s, origin).check(value);
  } catch (err) {
    if (!(err instanceof Unreadable)) throw err;
    return `must be ${err.expected}${err.detail !== undefined ? ` (${err.detail})` : ''}`;
  }
  const range = outOfRange(s, value as Parameters<typeof outOfRange>[1]);
  return range !== undefined ? `must be ${range}` : undefined;
}

function valueSchema(z: typeof Z, s: Setting, origin: SchemaOrigin): Z.ZodType {
  // The retry policy's reasons keep zod's own paths (`retryPolicy.reasons.badFile`).
  if (s.key === 'retryPolicy.reasons') return z.partialRecord(z.enum(REASONS), z.enum(['retry', 'never', 'fallback', 'stop']));
  // Ids keep zod's own element paths (`projects.0: must be a uuid`).
  if (shapedByZod(s, origin)) return z.union([z.literal('all'), z.array(z.uuid({ error: 'must be a uuid' })).min(1)], { error: 'must be a list of uuids, or all' });
  return z.any().superRefine((value, ctx) => {
    const problem = valueProblem(s, value, origin);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/**
 * What is wrong with a command line's form (settings/form.ts), in the words kindSchema's would use,
 * without zod (a fifth of a run's start-up to load): every flag's text was read by its kind
 * already (readFlag, which also reads the ids and reasons zod's shapes hold a file to), so what
 * is left to check are the command's arguments and the settings it requires.
 */
export function flagProblems(kind: JobKind, form: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const s of jobSettings(kind)) {
    if (shapedByZod(s, 'flags')) continue;
    const problem = valueProblem(s, getPath(form, s.key), 'flags');
    if (problem !== undefined) problems.push(`${s.key}: ${problem}`);
  }
  return problems;
}

/** A job file holds what its author wrote; flags and a run's record hold what the command line took (a project's name too). */
export type SchemaOrigin = 'file' | 'flags';

/** One job kind's schema: `job:` and every key its settings declare. */
export function kindSchema(kind: JobKind, origin: SchemaOrigin = 'file'): Z.ZodObject {
  const z = zod().z;
  const shape: Record<string, Z.ZodType> = { job: z.literal(kind) };
  const nested: Record<string, Record<string, Z.ZodType>> = {};
  for (const s of jobSettings(kind)) {
    const [head, tail] = s.key.split('.') as [string, string | undefined];
    const schema = valueSchema(z, s, origin);
    if (tail === undefined) shape[head] = s.required ? schema : schema.optional();
    else (nested[head] ??= {})[tail] = schema.optional();
  }
  for (const [head, inner] of Object.entries(nested)) shape[head] = z.object(inner).strict().optional();
  return z.object(shape).strict();
}
