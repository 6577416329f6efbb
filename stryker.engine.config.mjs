// `npm run mutation`, second part: mutation testing of the transfer engine's exactly-once steps
// (the intent before each write, the group digest, the settling of what a killed run left in
// flight, the accounting) over the engine's in-process suites (vitest.mutation-engine.config.ts),
// with the lease's settings otherwise. The JSON report is kept as bench/results/mutation-engine.json;
// the mutants left alive are named, with why, in bench/NOTES.md.
import lease from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...lease,
  vitest: { configFile: 'vitest.mutation-engine.config.ts' },
  mutate: ['src/sync/write.ts', 'src/sync/groups.ts', 'src/sync/ledger.ts', 'src/sync/walk.ts', 'src/sync/intents.ts', 'src/sync/cold-start.ts'],
  jsonReporter: { fileName: 'bench/results/mutation-engine.json' },
  thresholds: { high: 90, low: 80, break: 80 },
};
