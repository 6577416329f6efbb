import { stat } from 'node:fs/promises';
import { FolderSource, type FolderSourceOptions } from './folder.js';
import { ZipSource, DEFAULT_ZIP_LIMITS, type ZipLimits } from './zip.js';
import type { Source } from './types.js';

export type * from './types.js';
export { SourceError } from './types.js';
export { ZipRefusedError, DEFAULT_ZIP_LIMITS } from './zip.js';

/** A folder, or a .zip file read in place. */
export async function openSource(path: string, opts: FolderSourceOptions & { zipLimits?: Partial<ZipLimits> } = {}): Promise<Source> {
  const isZip = /\.zip$/i.test(path) && (await stat(path).then((s) => s.isFile(), () => false));
  const source = isZip ? new ZipSource(path, { ...DEFAULT_ZIP_LIMITS, ...opts.zipLimits }) : new FolderSource(path, opts);
  await source.prepare();
  return source;
}
