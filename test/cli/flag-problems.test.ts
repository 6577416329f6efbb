// A command line's form is checked without zod (src/settings/schema.ts, flagProblems: zod is a
// fifth of a run's start-up to load), and must say what the job file's schema says of the same
// form: the command's arguments and the settings a kind requires, in the same words.
import { describe, expect, it } from 'vitest';
import { JOB_KINDS, type JobKind } from '../../src/settings/declared.js';
import { flagProblems, jobSettings, kindSchema } from '../../src/settings/schema.js';
import { formatIssues } from '../../src/config/profile.js';
import { setPath, type Form } from '../../src/settings/form.js';
import { definitionFromFlags } from '../../jobs/definition.js';

/** What the schema a resumed run's record is read by says of the form ('' when nothing). */
function schemaSays(kind: JobKind, form: Form): string {
  const parsed = kindSchema(kind, 'flags').safeParse({ job: kind, ...form });
  return parsed.success ? '' : formatIssues(parsed.error);
}

describe('a command line\'s form, checked without zod', () => {
  for (const kind of JOB_KINDS) {
    it(`${kind}: nothing given names every required setting, as the schema does`, () => {
      const said = flagProblems(kind, { job: kind });
      expect(said.length).toBe(jobSettings(kind).filter((s) => s.required).length);
      expect(said.join('; ')).toBe(schemaSays(kind, {}));
    });

    it(`${kind}: each required setting given empty or wrong is named in the schema's words`, () => {
      for (const s of jobSettings(kind).filter((x) => x.required)) {
        const form: Form = {};
        setPath(form, s.key, '');
        const mine = flagProblems(kind, { job: kind, ...form }).find((p) => p.startsWith(`${s.key}:`));
        const theirs = schemaSays(kind, form).split('; ').find((p) => p.startsWith(`${s.key}:`));
        expect(mine).toBe(theirs);
        expect(mine).toMatch(/: must be /);
      }
    });
  }

  it('refuses a form the flags loader is given with an argument that is not a path', () => {
    expect(() => definitionFromFlags('mirror', { source: '', project: '2b0c8a3e-1f7e-4c1e-9f0a-0c9e1d2b3a4f' })).toThrow(/^source: must be a path that is not empty$/);
  });
});
