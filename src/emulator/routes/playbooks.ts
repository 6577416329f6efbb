// Playbooks: list, create, and the two searches (the caller's and the whole organization's).
import type { FastifyRequest } from 'fastify';
import { HttpError } from '../context.js';
import type { CoreContext, CoreRoutePlugin } from '../core-context.js';
import { type MetadataValueInput, metadataValueInputSchema } from '../service/metadata-values.js';
import { playbookMetadataValues } from '../service/playbook-inputs.js';
import type { AssemblySummary } from '../state/assemblies.js';
import { type MetadataFilter, newPlaybookRecord, PLAYBOOK_SORTING, type PlaybookRecord } from '../state/playbooks.js';
import { ownerOf } from './access.js';
import { descQuery, objectSchema, pageWindow, type Paging, pagingQuery } from './schemas.js';

interface PlaybookBody {
  name: string;
  description?: string | null;
  isPrivate: boolean;
  organizationWide: boolean;
  metadata?: MetadataValueInput[];
}

interface ListQuery extends Paging {
  searchText?: string | null;
  sorting: string;
  desc: boolean;
}

interface SearchBody extends ListQuery {
  metadata: { metadataId: string; dataType: string; value: unknown }[];
  scope: string;
}

const sorting = { type: 'string', enum: Object.keys(PLAYBOOK_SORTING), default: 'dateAdded' };

const playbookBody = objectSchema(
  {
    name: { type: 'string', minLength: 1 },
    description: { type: ['string', 'null'] },
    isPrivate: { type: 'boolean' },
    organizationWide: { type: 'boolean' },
    metadata: { type: 'array', items: { ...metadataValueInputSchema, required: ['organizationMetadataIdentifier'] } },
  },
  ['name', 'isPrivate', 'organizationWide'],
);

const searchBody = objectSchema({
  ...pagingQuery,
  ...descQuery,
  searchText: { type: ['string', 'null'] },
  sorting,
  // `all` is the one scope value the spec shows; with no other value known, others are refused.
  scope: { type: 'string', enum: ['all'], default: 'all' },
  metadata: {
    type: 'array',
    default: [],
    items: objectSchema({ metadataId: { type: 'string' }, dataType: { type: 'string' }, value: {} }, ['metadataId', 'dataType', 'value']),
  },
});

function renderPlaybook(playbook: PlaybookRecord, summary: AssemblySummary | undefined) {
  const groupCount = summary?.groupCount ?? 0;
  return {
    objectIdentifier: playbook.objectIdentifier,
    name: playbook.name,
    description: playbook.description,
    isPrivate: playbook.isPrivate,
    organizationWide: playbook.organizationWide,
    dateAdded: playbook.dateAdded,
    resourceOwner: playbook.owner,
    hasImage: false,
    hasWordAssembly: summary?.hasFile ?? false,
    hasMultipleGroups: groupCount > 1,
    requiresMaintenance: false,
    groupCount,
    promptCount: 0,
  };
}

export const playbookRoutes: CoreRoutePlugin = (app, ctx) => {
  const stores = ctx.stores.playbook;

  const page = (req: FastifyRequest, query: ListQuery, options: { allOfTenant: boolean; metadata: MetadataFilter[] }) => {
    const caller = ctx.caller(req);
    const result = stores.playbooks.search({
      tenant: caller.tenant,
      ...(options.allOfTenant ? {} : { visibleTo: caller.userId }),
      ...(query.searchText ? { searchText: query.searchText } : {}),
      metadata: options.metadata,
      sorting: query.sorting,
      desc: query.desc,
      ...pageWindow(query),
    });
    const summaries = stores.assemblies.summaries(result.items.map((p) => p.objectIdentifier));
    return { items: result.items.map((p) => renderPlaybook(p, summaries.get(p.objectIdentifier))), totalCount: result.totalCount };
  };

  app.get<{ Querystring: ListQuery }>(
    '/playbooks',
    { schema: { querystring: objectSchema({ ...pagingQuery, ...descQuery, searchText: { type: 'string' }, sorting }) } },
    async (req) => page(req, req.query, { allOfTenant: false, metadata: [] }),
  );

  app.post<{ Body: PlaybookBody }>('/playbooks', { schema: { body: playbookBody } }, async (req, reply) => {
    ctx.requireWrite(req);
    const caller = ctx.caller(req);
    const playbook = newPlaybookRecord(req.body, { objectIdentifier: ctx.newId(), tenant: caller.tenant, dateAdded: ctx.now(), owner: ownerOf(ctx, req) });
    const metadata = playbookMetadataValues(req.body.metadata ?? [], (id) => ctx.organizationMetadata(caller.tenant, id), ctx.newId);
    ctx.db.transaction(() => {
      stores.playbooks.create(playbook);
      for (const value of metadata) stores.metadata.add(playbook.objectIdentifier, value);
    })();
    return reply.code(201).send(renderPlaybook(playbook, undefined));
  });

  for (const [path, allOfTenant] of [
    ['/playbooks/search', false],
    ['/playbooks/search/all', true],
  ] as const) {
    app.post<{ Body: SearchBody }>(path, { schema: { body: searchBody } }, async (req) => {
      const metadata = req.body.metadata.map((filter) => metadataFilter(ctx, ctx.caller(req).tenant, filter));
      return page(req, req.body, { allOfTenant, metadata });
    });
  }
};

/** Checks a search filter against its definition: the dataType must match and the value must fit it. */
function metadataFilter(ctx: CoreContext, tenant: string, filter: SearchBody['metadata'][number]): MetadataFilter {
  const definition = ctx.organizationMetadata(tenant, filter.metadataId);
  if (!definition) throw badFilter(`metadataId ${filter.metadataId} is not an organization metadata definition.`);
  if (definition.dataType !== filter.dataType) {
    throw badFilter(`dataType ${filter.dataType} does not match ${definition.name}, which is ${definition.dataType}.`);
  }
  const { value } = filter;
  const definitionId = definition.objectIdentifier;
  const expected = (what: string) => badFilter(`The value of a ${definition.dataType} filter (${definition.name}) must be ${what}.`);
  switch (definition.dataType) {
    case 'text':
      if (typeof value !== 'string') throw expected('a string');
      return { definitionId, kind: 'text', value };
    case 'yesNo':
      if (typeof value !== 'boolean') throw expected('a boolean');
      return { definitionId, kind: 'yesNo', value };
    case 'decimal':
      if (typeof value !== 'number') throw expected('a number');
      return { definitionId, kind: 'decimal', value };
    case 'date':
      if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) throw expected('a date-time string');
      return { definitionId, kind: 'date', value: new Date(value).toISOString() };
    case 'singleCategory':
    case 'multiCategory': {
      const ids = typeof value === 'string' ? [value] : value;
      if (!Array.isArray(ids) || ids.length === 0 || ids.some((id) => typeof id !== 'string')) throw expected('an option id or an array of option ids');
      return { definitionId, kind: 'category', value: ids as string[] };
    }
    default:
      throw badFilter(`Filters on ${definition.dataType} metadata are not supported.`);
  }
}

function badFilter(detail: string): HttpError {
  return new HttpError(400, 'Bad Request', detail);
}
