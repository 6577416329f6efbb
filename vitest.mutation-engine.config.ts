// The suites `npm run mutation` runs against each mutant of the transfer engine's exactly-once
// steps (stryker.engine.config.mjs): the engine alone, on in-memory sources and destinations and
// real SQLite stores, so that whether a mutant dies never depends on a service or a process.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/sync/engine*.test.ts', 'test/sync/decide.test.ts'],
    testTimeout: 60_000,
    pool: 'forks',
  },
});
