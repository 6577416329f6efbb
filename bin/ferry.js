#!/usr/bin/env node
// Thin launcher for the compiled CLI (built by `npm ci` through the prepare script).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/src/cli/entry.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('ferry: the compiled CLI is missing; run `npm run build` in the ferry folder first\n');
  process.exit(2);
}
await import(entry.href);
