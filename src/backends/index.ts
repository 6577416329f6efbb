import type { PathPatterns } from '../sync/patterns.js';
import { stat } from 'node:fs/promises';
import { FolderSource, type FolderSourceOptions } from './folder/source.js';
import type { ZipLimits } from './zip/source.js';
import type { Source } from '../sync/types.js';

export type * from '../sync/types.js';
export { SourceError } from '../sync/types.js';

/** A folder, or a .zip file read in place. */
export async function openSource(path: string, opts: FolderSourceOptions & { zipLimits?: Partial<ZipLimits> } = {}): Promise<Source> {
  const isZip = /\.zip$/i.test(path) && (await stat(path).then((s) => s.isFile(), () => false));
  // The zip reader (unzipper and its dependencies) is loaded only for a zip: a folder's start-up does not pay for it.
  const source = isZip ? await openZip(path, opts.zipLimits, opts) : new FolderSource(path, opts);
  await source.prepare();
  return source;
}

async function openZip(path: string, limits: Partial<ZipLimits> | undefined, patterns: PathPatterns): Promise<Source> {
  const { ZipSource, DEFAULT_ZIP_LIMITS } = await import('./zip/source.js');
  return new ZipSource(path, { ...DEFAULT_ZIP_LIMITS, ...limits }, { include: patterns.include, exclude: patterns.exclude, rules: patterns.rules });
}
