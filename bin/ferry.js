#!/usr/bin/env node
// Thin launcher for the compiled CLI (built by `npm ci` through the prepare script).
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';

// undici parses HTTP/1.1 with llhttp compiled to WebAssembly. V8 compiles it at the first request
// with its baseline compiler, then again with its optimizing one on a background thread, and a
// process that exits waits for that to finish: measured, 150-200 ms between process.exit and the
// end of an empty pull (20 ms with this flag), and that much CPU taken from a transfer besides.
// Baseline code parses a response's head in microseconds either way; a large body is read
// without llhttp (src/api/bulk-dispatcher.ts). Set before any request compiles it.
setFlagsFromString('--liftoff-only');

const entry = new URL('../dist/src/cli/entry.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('ferry: the compiled CLI is missing; run `npm run build` in the ferry folder first\n');
  process.exit(2);
}
await import(entry.href);
