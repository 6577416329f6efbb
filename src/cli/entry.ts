// Process entry: run, then exit with the command's code once output is flushed.
import { run } from './main.js';
import { installStallNet } from './stall.js';
import { answersInJson } from './reply-mode.js';

installStallNet(answersInJson(process.argv.slice(2)));

// A reader that stops early (`ferry jobs list | head -1`) closes the pipe: the rest of the output
// has nowhere to go, which is what the user asked for, not an error to show a stack trace for.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    throw err;
  });
}

const code = await run(process.argv.slice(2));
process.exitCode = code;
// Everything a command does is awaited before run() returns; what is left is Node's own teardown
// (about 200 ms measured after a no-op mirror, with no handle open), which a cron loop or a
// shell script would pay on every call. So: flush, then exit.
await Promise.all([process.stdout, process.stderr].map((s) => new Promise<void>((resolve) => (s.writableLength === 0 ? resolve() : s.write('', () => resolve())))));
process.exit(code);
