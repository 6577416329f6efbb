// Process entry: run, then exit with the command's code once output is flushed.
import { run } from './main.js';

const code = await run(process.argv.slice(2));
process.exitCode = code;
