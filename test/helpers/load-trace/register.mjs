// `node --import ./register.mjs`: installs hooks.mjs beside it, and traces CommonJS as well: Node 20's
// module hooks see what is imported, never what is required (undici's parts and the packages of
// src/libraries.ts are required), so each file `require` resolves is written to the trace too.
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';
import { pathToFileURL } from 'node:url';

register(new URL('./hooks.mjs', import.meta.url));

const trace = process.env.FERRY_LOAD_TRACE;
if (trace) {
  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function (...args) {
    const file = resolveFilename.apply(this, args);
    appendFileSync(trace, `${file.startsWith('/') ? pathToFileURL(file).href : `node:${file.replace(/^node:/, '')}`}\n`);
    return file;
  };
}
