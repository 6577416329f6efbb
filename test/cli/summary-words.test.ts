// Every summary line read for the words a newcomer tripped on (issue 77): plurals that do not
// agree ("1 documents"), a headline "failed" beside "failed 0" with nothing saying why,
// "(nothing failed)" over a run that had failures, "note: warning:", "(s)". Rendered from
// summaries of each status and count, as summaryText renders them.
import { describe, expect, it } from 'vitest';
import { summaryText } from '../../src/cli/output.js';
import type { JobSummary } from '../../src/runner/job.js';

function rendered(summary: JobSummary): string {
  return summaryText(summary);
}

const BAD: [RegExp, string][] = [
  [/\b1 (documents|entries|files|archives|rows|playbooks|items)\b/, 'a plural after 1'],
  [/note: warning:/, 'a warning said as a note'],
  [/\(s\)/, 'a plural left to the reader'],
];

function summary(status: JobSummary['status'], counts: Partial<JobSummary['counts']>, extra: Record<string, unknown> = {}): JobSummary {
  return { job: 'mirror', runId: 5, status, counts: { discovered: 0, uploaded: 0, skipped: 0, failed: 0, reconciled: 0, ...counts }, bytes: 10, durationMs: 1200, errors: [], problems: [], ...extra };
}

const refusedBy = (n: number) => ({
  processing: { documents: n + 1, completed: 1, refused: n, processing: 0, failedReasonSummary: { badFile: n }, timedOut: false, waited: true },
  errors: Array.from({ length: n }, (_, i) => ({ key: `f${i}.txt`, error: "refused by the service's processing: badFile" })),
});

describe('the words of a summary', () => {
  const cases: [string, JobSummary][] = [];
  for (const n of [1, 2]) {
    cases.push([`succeeded, ${n}`, summary('succeeded', { discovered: n, uploaded: n })]);
    cases.push([`failed items, ${n}`, summary('failed', { discovered: n + 1, uploaded: 1, failed: n }, { errors: [{ key: 'x', error: 'refused' }] })]);
    cases.push([`refused by processing, ${n}`, summary('failed', { discovered: n + 1, uploaded: n + 1 }, { ...refusedBy(n), problems: [{ key: '(lease)', reason: 'warning: no lease' }] })]);
    cases.push([`interrupted, ${n}`, summary('interrupted', { discovered: n + 2, uploaded: 1, interrupted: n } as Partial<JobSummary['counts']>)]);
    cases.push([`deleted locally, ${n}`, summary('succeeded', { discovered: 1, uploaded: 1 }, { deletedLocally: { count: n, sample: Array.from({ length: n }, (_, i) => `gone${i}.txt`), before: 0 } })]);
    cases.push([`no-op, ${n}`, summary('succeeded', { discovered: n, skipped: n })]);
  }
  for (const [name, s] of cases) {
    it(`${name}: no known bad words`, () => {
      const text = rendered(s);
      for (const [pattern, what] of BAD) expect(text, `${what}:\n${text}`).not.toMatch(pattern);
      // A failed run whose items all went through says what failed it.
      if (/: failed in/.test(text) && s.counts.failed === 0) expect(text).toMatch(/refused/);
      // "Nothing failed" only where nothing did.
      if (s.errors.length || s.counts.failed) expect(text).not.toContain('nothing failed');
    });
  }

  it('a run refused by processing says why in its headline', () => {
    expect(rendered(summary('failed', { discovered: 3, uploaded: 3 }, refusedBy(2)))).toMatch(/^mirror run 5: failed \(the service's processing refused 2 documents\) in/);
    expect(rendered(summary('failed', { discovered: 2, uploaded: 2 }, refusedBy(1)))).toMatch(/^mirror run 5: failed \(the service's processing refused 1 document\) in/);
  });
});
