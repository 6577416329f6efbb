// Projects, the caller's personal project and project analytics.
import type { CoreRoutePlugin } from '../core-context.js';
import { HttpError } from '../context.js';
import { type MetadataValueInput, metadataValueInputSchema, renderMetadataValue, storeMetadataValue } from '../service/metadata-values.js';
import { ITEM_FILTERING, type ItemFiltering } from '../state/list-query.js';
import { PROJECT_COLUMNS, type ProjectRecord } from '../state/projects.js';
import { ownerOf, visibleProject } from './access.js';
import { descQuery, objectSchema, pageWindow, type Paging, pagingQuery, uuid } from './schemas.js';

interface ProjectBody {
  name: string;
  description: string | null;
  metadata?: MetadataValueInput[] | null;
}

interface ProjectListQuery extends Paging {
  searchText?: string;
  scope: string;
  sorting: string;
  desc: boolean;
  filterColumn?: string;
  filterOperation?: ItemFiltering;
  filterSearchTerm?: string;
}

const projectBody = objectSchema(
  {
    name: { type: 'string', minLength: 1 },
    description: { type: ['string', 'null'] },
    metadata: { type: ['array', 'null'], items: metadataValueInputSchema },
  },
  ['name', 'description'],
);

const columns = Object.keys(PROJECT_COLUMNS);

export const projectRoutes: CoreRoutePlugin = (app, ctx) => {
  const { projects, documents, assistants } = ctx.stores;
  const definitions = (tenant: string) => (id: string) => ctx.organizationMetadata(tenant, id);

  const render = (project: ProjectRecord) => ({
    objectIdentifier: project.objectIdentifier,
    name: project.name,
    description: project.description,
    dateAdded: project.dateAdded,
    isPersonal: project.isPersonal,
    metadataValues: project.metadataValues.map((value) => renderMetadataValue(value, definitions(project.tenant))),
    resourceOwner: project.owner,
  });

  const storedMetadata = (tenant: string, inputs: MetadataValueInput[] | null | undefined) =>
    (inputs ?? []).map((input) => storeMetadataValue(input, definitions(tenant), ctx.newId()));

  app.get<{ Querystring: ProjectListQuery }>(
    '/projects',
    {
      schema: {
        querystring: objectSchema({
          ...pagingQuery,
          ...descQuery,
          searchText: { type: 'string' },
          scope: { type: 'string', default: 'member' },
          sorting: { type: 'string', enum: columns, default: 'dateAdded' },
          filterColumn: { type: 'string', enum: columns },
          filterOperation: { type: 'string', enum: ITEM_FILTERING },
          filterSearchTerm: { type: 'string' },
        }),
      },
    },
    async (req) => {
      const caller = ctx.caller(req);
      const { filterColumn, filterOperation, filterSearchTerm } = req.query;
      if (filterColumn && (!filterOperation || filterSearchTerm === undefined)) {
        throw new HttpError(400, 'Bad Request', 'filterColumn needs filterOperation and filterSearchTerm.');
      }
      const column = filterColumn && PROJECT_COLUMNS[filterColumn];
      const sortColumn = PROJECT_COLUMNS[req.query.sorting] as string;
      const result = projects.list({
        tenant: caller.tenant,
        userId: caller.userId,
        ...(req.query.searchText ? { searchText: req.query.searchText } : {}),
        sortColumn: `fold_case(${sortColumn})`,
        desc: req.query.desc,
        ...(column && filterOperation
          ? { filter: { numericExpression: column, textExpression: column, operation: filterOperation, term: filterSearchTerm ?? '', numeric: false } }
          : {}),
        ...pageWindow(req.query),
      });
      return { items: result.items.map(render), totalCount: result.totalCount };
    },
  );

  app.post<{ Body: ProjectBody }>('/projects', { schema: { body: projectBody } }, async (req) => {
    ctx.requireWrite(req);
    const caller = ctx.caller(req);
    const project: ProjectRecord = {
      objectIdentifier: ctx.newId(),
      tenant: caller.tenant,
      name: req.body.name,
      description: req.body.description,
      dateAdded: ctx.now(),
      isPersonal: false,
      owner: ownerOf(ctx, req),
      metadataValues: storedMetadata(caller.tenant, req.body.metadata),
    };
    projects.create(project);
    return render(project);
  });

  // Registered before the templated route for readability; the router also prefers static segments.
  app.get('/projects/my-personal-project', async (req) => {
    const caller = ctx.caller(req);
    let project = projects.personal(caller.tenant, caller.userId);
    if (!project) {
      project = {
        objectIdentifier: ctx.newId(),
        tenant: caller.tenant,
        name: 'My personal project',
        description: `Personal project of ${caller.userName}`,
        dateAdded: ctx.now(),
        isPersonal: true,
        owner: ownerOf(ctx, req),
        metadataValues: [],
      };
      projects.create(project);
    }
    return render(project);
  });

  // The spec declares this path parameter a plain string: an id that is not a uuid is simply not found.
  app.get<{ Params: { projectIdentifier: string } }>('/projects/:projectIdentifier', async (req) =>
    render(visibleProject(ctx, req, req.params.projectIdentifier)),
  );

  app.put<{ Params: { projectIdentifier: string }; Body: ProjectBody }>(
    '/projects/:projectIdentifier',
    { schema: { params: objectSchema({ projectIdentifier: uuid }), body: projectBody } },
    async (req) => {
      ctx.requireWrite(req);
      const project = visibleProject(ctx, req, req.params.projectIdentifier);
      const updated: ProjectRecord = {
        ...project,
        name: req.body.name,
        description: req.body.description,
        metadataValues: storedMetadata(project.tenant, req.body.metadata),
      };
      projects.update(updated);
      return render(updated);
    },
  );

  app.delete<{ Params: { projectIdentifier: string } }>(
    '/projects/:projectIdentifier',
    { schema: { params: objectSchema({ projectIdentifier: uuid }) } },
    async (req, reply) => {
      ctx.requireWrite(req);
      const project = visibleProject(ctx, req, req.params.projectIdentifier);
      projects.delete(project.objectIdentifier, Date.parse(ctx.now()));
      ctx.events.emit('projectDeleted', { tenant: project.tenant, projectIdentifier: project.objectIdentifier });
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { projectIdentifier: string } }>(
    '/projects/:projectIdentifier/analytics',
    { schema: { params: objectSchema({ projectIdentifier: uuid }) } },
    async (req) => {
      const project = visibleProject(ctx, req, req.params.projectIdentifier);
      return {
        objectIdentifier: project.objectIdentifier,
        assistantCount: assistants.assistantCount(project.objectIdentifier),
        flowCount: 0,
        teamCount: 0,
        documentCount: documents.fileCount(project.objectIdentifier),
      };
    },
  );
};
