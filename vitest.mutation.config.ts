// The suites `npm run mutation` (StrykerJS, stryker.config.mjs) runs against each mutant of the
// lease and of the listing rule: pure, in-process, on scripted clocks and boards, so that whether a
// mutant dies never depends on how processes interleave. No global setup (nothing is built).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/runner/lease-*.test.ts', 'test/api/listed.test.ts', 'test/runner/lease-judge.test.ts'],
    testTimeout: 60_000,
    pool: 'forks',
  },
});
