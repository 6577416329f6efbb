// Preloaded (`node --require`) into a ferry process by a test: the process reports four cores, as a
// larger machine would, so that a big upload's sha256 is taken on a thread of its own
// (src/api/content-hash.ts), and each hashing thread started is marked in FERRY_TEST_THREAD_MARK.
// FERRY_TEST_THREAD_END=N ends the thread as the Nth message is posted to it (a thread that dies).
// ES modules see the patched functions through syncBuiltinESMExports.
const os = require('node:os');
const threads = require('node:worker_threads');
const { appendFileSync } = require('node:fs');
const { syncBuiltinESMExports } = require('node:module');

os.availableParallelism = () => 4;
const Original = threads.Worker;
threads.Worker = class extends Original {
  constructor(...args) {
    super(...args);
    if (process.env.FERRY_TEST_THREAD_MARK) appendFileSync(process.env.FERRY_TEST_THREAD_MARK, 'started\n');
    this.posted = 0;
  }

  postMessage(...args) {
    if (++this.posted === Number(process.env.FERRY_TEST_THREAD_END)) {
      if (process.env.FERRY_TEST_THREAD_MARK) appendFileSync(process.env.FERRY_TEST_THREAD_MARK, 'ended\n');
      void this.terminate();
      return;
    }
    super.postMessage(...args);
  }
};
syncBuiltinESMExports();
