import { stat } from 'node:fs/promises';
import { FolderSource, type FolderSourceOptions } from './folder.js';
import type { ZipLimits } from './zip.js';
import type { Source } from './types.js';

export type * from './types.js';
export { SourceError } from './types.js';

/** A folder, or a .zip file read in place. */
export async function openSource(path: string, opts: FolderSourceOptions & { zipLimits?: Partial<ZipLimits> } = {}): Promise<Source> {
  const isZip = /\.zip$/i.test(path) && (await stat(path).then((s) => s.isFile(), () => false));
  // The zip reader (unzipper and its dependencies) is loaded only for a zip: a folder's start-up does not pay for it.
  const source = isZip ? await openZip(path, opts.zipLimits) : new FolderSource(path, opts);
  await source.prepare();
  return source;
}

async function openZip(path: string, limits: Partial<ZipLimits> | undefined): Promise<Source> {
  const { ZipSource, DEFAULT_ZIP_LIMITS } = await import('./zip.js');
  return new ZipSource(path, { ...DEFAULT_ZIP_LIMITS, ...limits });
}
