// Packages only some commands need, loaded at their first use. zod and yaml were a fifth of
// ferry's start-up on every command, though only a config file, a job file or a --map file needs
// them, and a cron job configured by the environment reads none. The archive and workbook
// packages (archiver, unzipper, numfmt) and fast-glob were 0.45 s of a pull's 0.75 s start-up
// (measured, issue 63): the one job loader reaches every job's modules, and none of those
// packages is needed until a zip, a workbook or a folder walk is. So with a manifest's (csv-parse,
// csv-stringify, saxes) and a code page's (iconv-lite): a mirror of a folder loaded 294 files
// before these and the split of the job settings' readers, 256 after. One (CommonJS) instance of each.
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

/** The package, loaded at the first call and kept (a call per workbook cell costs a field read). */
function once<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= load(name) as T);
}

export const zod = once<typeof import('zod')>('zod');
export const yaml = once<typeof import('yaml')>('yaml');
export const archiver = once<typeof import('archiver')>('archiver');
export const unzipper = once<typeof import('unzipper')>('unzipper');
/** numfmt ships ES modules only (its package's `main` names a file it does not ship): imported, once. */
let numfmtLoaded: Promise<typeof import('numfmt')> | undefined;
export const numfmt = (): Promise<typeof import('numfmt')> => (numfmtLoaded ??= import('numfmt'));
export const fastGlob = once<typeof import('fast-glob')>('fast-glob');
export const iconv = once<typeof import('iconv-lite')>('iconv-lite');
export const csvParse = once<typeof import('csv-parse')>('csv-parse');
export const csvParseSync = once<typeof import('csv-parse/sync')>('csv-parse/sync');
export const csvStringify = once<typeof import('csv-stringify')>('csv-stringify');
export const saxes = once<typeof import('saxes')>('saxes');
