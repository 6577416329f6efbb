// JSON-schema fragments and helpers shared by the core routes' request validation.
export const uuid = { type: 'string', format: 'uuid' } as const;

/** Page defaults where the spec shows none: page 1, 50 items, at most 1000 (400 above). */
export const PAGE_DEFAULTS = { pageNumber: 1, pageSize: 50, maxPageSize: 1000 } as const;

export const pagingQuery = {
  pageNumber: { type: 'integer', minimum: 1, default: PAGE_DEFAULTS.pageNumber },
  pageSize: { type: 'integer', minimum: 1, maximum: PAGE_DEFAULTS.maxPageSize, default: PAGE_DEFAULTS.pageSize },
} as const;

export const descQuery = { desc: { type: 'boolean', default: true } } as const;

export interface Paging {
  pageNumber: number;
  pageSize: number;
}

export function pageWindow(query: Paging): { limit: number; offset: number } {
  return { limit: query.pageSize, offset: (query.pageNumber - 1) * query.pageSize };
}

export function objectSchema(properties: Record<string, unknown>, required: string[] = []): Record<string, unknown> {
  return { type: 'object', properties, required };
}
