// Preloaded (--import) into a process whose exit the start-up bench times: writes to
// BENCH_EXIT_FILE the moment the process asks to exit (Node's process.reallyExit, which
// process.exit ends in), so that the bench can tell the time the process took after it.
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_EXIT_FILE;
const really = process.reallyExit;
process.reallyExit = function (code) {
  if (file) writeFileSync(file, String(Date.now()));
  return really.call(process, code);
};
