// `npm run mutation`: mutation testing of the lease (src/runner/lease/) and of the listing rule
// (src/api/listed.ts) with StrykerJS, over the in-process suites of vitest.mutation.config.ts.
// Not part of `npm test`. The JSON report is kept as bench/results/mutation-lease.json; the
// mutants left alive are named, with why, in bench/NOTES.md.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  mutate: ['src/runner/lease/*.ts', 'src/api/listed.ts'],
  coverageAnalysis: 'perTest',
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'bench/results/mutation-lease.json' },
  concurrency: 2,
  thresholds: { high: 90, low: 85, break: 85 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
