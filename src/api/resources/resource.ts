import type { Transport } from '../transport.js';
import { PagedList, type ListOptions } from '../paging.js';

/** Common ground of the per-part resource classes. */
export abstract class Resource {
  constructor(protected readonly t: Transport) {}
}

/** Encodes one path segment. */
export function seg(value: string): string {
  if (value === '') throw new TypeError('an identifier in the path is empty');
  return encodeURIComponent(value);
}

/** A paged list whose page parameters are called `pageNumber`/`pageSize` (or `page`/`pageSize`). */
export function pagedGet<T>(
  t: Transport,
  path: string,
  query: Record<string, unknown>,
  opts: ListOptions,
  names: { page: string; size: string } = { page: 'pageNumber', size: 'pageSize' },
  host: 'base' | 'settings' = 'base',
): PagedList<T> {
  return new PagedList<T>(
    (pageNumber, pageSize, signal) =>
      t.json({ method: 'GET', path, host, query: { ...clean(query), [names.page]: pageNumber, [names.size]: pageSize } }, { signal }),
    t.pages.listOptions(path, opts),
  );
}

/** A list the service returns whole (no paging parameters): one page, then done. */
export function unpagedGet<T>(t: Transport, path: string, query: Record<string, unknown>, host: 'base' | 'settings' = 'base', signal?: AbortSignal): PagedList<T> {
  return new PagedList<T>(
    async (pageNumber, _size, sig) => (pageNumber === 1 ? t.json({ method: 'GET', path, host, query: clean(query) }, { signal: sig ?? signal }) : []),
    { pageSize: Number.MAX_SAFE_INTEGER },
  );
}

function clean(query: Record<string, unknown>): Record<string, string | number | boolean | (string | number | boolean)[]> {
  const out: Record<string, string | number | boolean | (string | number | boolean)[]> = {};
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    out[k] = v as string | number | boolean | (string | number | boolean)[];
  }
  return out;
}
