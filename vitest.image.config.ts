import { defineConfig } from 'vitest/config';

// `npm run test:image`: the Dockerfile's two images built and run (test/deploy/image.test.ts). One
// file, one worker: the builds take the machine.
export default defineConfig({
  test: {
    include: ['test/deploy/image.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 1_500_000,
    pool: 'forks',
    maxWorkers: 1,
    globalSetup: ['test/global-setup.ts'],
  },
});
