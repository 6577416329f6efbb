import { configDefaults, defineConfig } from 'vitest/config';

/** Built and run by `npm run test:image` (vitest.image.config.ts), beside `npm test` in .ci/run: docs/scale-out.md, *CI's minutes*. */
const IMAGE_SUITE = 'test/deploy/image.test.ts';

/** The job suites, run a second time against the strict emulator (test/helpers/service.ts). */
const JOB_SUITES = ['test/jobs/**/*.test.ts', 'test/backends/project-*.test.ts', 'test/pull/**/*.test.ts', 'test/playbooks/**/*.test.ts', 'test/tenants/**/*.test.ts'];
/**
 * Job suites whose behaviour never reaches what the strict emulator answers differently: the lock
 * between overlapping runs is local to the checkpoint store; a kept partial download is the local
 * folder's alone; a file hashed as it is sent goes to a project's root and is told apart by its
 * metadata, never by folders or by where content is served (the form order it does depend on is
 * a mode of its own, which that suite sets both ways); a zip's plan and its refusal make no folder
 * and read nothing back. Run once, against the default.
 */
const NOT_MODE_DEPENDENT = ['test/jobs/overlap.test.ts', 'test/jobs/listing-lag.test.ts', 'test/pull/resume-partials.test.ts', 'test/jobs/snapshot-during-mirror.test.ts', 'test/backends/project-hash-while-sending.test.ts', 'test/jobs/big-zip.test.ts'];
/**
 * Suites about the local file systems a pull writes to (real NTFS and exFAT mounts): what they test
 * is the same whichever way the service hands out content, which the pull suites under test/pull
 * already run both ways. Run once, against the default.
 */
const LOCAL_FILE_SYSTEMS = ['test/pull/pull-filesystems.test.ts'];

/**
 * The job suites that decide from listings (cold start, a crash, overlapping runs, the lease, a
 * migration without its store, playbook replay), run a third time against an emulator that lists
 * each new item up to 300 ms late, ferry told a bound of 400 ms (test/helpers/service.ts).
 */
const LISTING_SUITES = ['test/jobs/cold-start.test.ts', 'test/jobs/mirror-crash.test.ts', 'test/jobs/overlap.test.ts', 'test/jobs/lease-processes.test.ts', 'test/tenants/migrate-stateless.test.ts', 'test/playbooks/roundtrip.test.ts'];

export default defineConfig({
  test: {
    // Integration tests start servers and move real files; none asserts on time. The bound is for a
    // test that hangs: on a loaded 2-core machine the slowest (a plan of a 150,000-entry zip, every
    // job command run as a process) took 50 s of the 60 once allowed, and 60 under a second suite.
    testTimeout: 180_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // One module graph per worker, not per file: importing src/ through vite for each of ~100 test files
    // was a third of the suite's CPU time. Every test file starts its own emulator and temp dirs.
    isolate: false,
    // The tests wait on loopback HTTP, child processes and the disk far more than they compute:
    // on a 2-core machine three workers finish the suite much sooner than the default of one.
    maxWorkers: 3,
    globalSetup: ['test/global-setup.ts'],
    projects: [
      { extends: true, test: { name: 'default', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, IMAGE_SUITE] } },
      { extends: true, test: { name: 'strict', include: JOB_SUITES, exclude: [...NOT_MODE_DEPENDENT, ...LOCAL_FILE_SYSTEMS], env: { FERRY_TEST_EMULATOR: 'strict' } } },
      { extends: true, test: { name: 'lagging', include: LISTING_SUITES, env: { FERRY_TEST_LISTING_LAG_MS: '300' } } },
    ],
  },
});
