// zod and yaml, loaded at their first use. Together they were a fifth of ferry's start-up on
// every command, though only a config file, a job file or a --map file needs them, and a cron job
// configured by the environment reads none. One (CommonJS) instance of each serves every schema.
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

export const zod = (): typeof import('zod') => load('zod') as typeof import('zod');
export const yaml = (): typeof import('yaml') => load('yaml') as typeof import('yaml');
