// The options of a tenant's category organization metadata definitions.
import type { FastifyRequest } from 'fastify';
import type { CoreRoutePlugin } from '../core-context.js';
import { HttpError, type MetadataDefinition } from '../context.js';
import { CATEGORY_DATA_TYPES } from '../state/organization-metadata.js';
import { descQuery, objectSchema, pageWindow, type Paging, pagingQuery, uuid } from './schemas.js';

const PREFIX = '/projects/organization-metadata/:organizationMetadataIdentifier/options';
const definitionParams = objectSchema({ organizationMetadataIdentifier: uuid });
const optionParams = objectSchema({ organizationMetadataIdentifier: uuid, objectIdentifier: uuid });
const nameBody = objectSchema({ name: { type: 'string', minLength: 1 } }, ['name']);

type DefinitionParams = { organizationMetadataIdentifier: string };
type OptionParams = DefinitionParams & { objectIdentifier: string };

export const organizationMetadataOptionRoutes: CoreRoutePlugin = (app, ctx) => {
  const store = ctx.stores.organizationMetadata;

  const definitionOf = (req: FastifyRequest<{ Params: DefinitionParams }>): MetadataDefinition => {
    const id = req.params.organizationMetadataIdentifier;
    const definition = ctx.organizationMetadata(ctx.caller(req).tenant, id);
    if (!definition) throw new HttpError(404, 'Not Found', `Organization metadata ${id} does not exist.`);
    return definition;
  };

  const optionOf = (req: FastifyRequest<{ Params: OptionParams }>) => {
    const definition = definitionOf(req);
    const option = store.option(definition.objectIdentifier, req.params.objectIdentifier);
    if (!option) throw new HttpError(404, 'Not Found', `Option ${req.params.objectIdentifier} does not exist.`);
    return { definition, option };
  };

  app.get<{ Params: DefinitionParams; Querystring: Paging & { searchText?: string; sorting: string; desc: boolean } }>(
    PREFIX,
    {
      schema: {
        params: definitionParams,
        querystring: objectSchema({
          ...pagingQuery,
          ...descQuery,
          searchText: { type: 'string' },
          // Creation order or name; the spec does not show the enum's values.
          sorting: { type: 'string', enum: ['dateAdded', 'name'], default: 'dateAdded' },
        }),
      },
    },
    async (req) =>
      store.listOptions(definitionOf(req).objectIdentifier, {
        ...(req.query.searchText ? { searchText: req.query.searchText } : {}),
        sortByName: req.query.sorting === 'name',
        desc: req.query.desc,
        ...pageWindow(req.query),
      }),
  );

  app.post<{ Params: DefinitionParams; Body: { name: string } }>(PREFIX, { schema: { params: definitionParams, body: nameBody } }, async (req) => {
    ctx.requireWrite(req);
    const definition = definitionOf(req);
    if (!CATEGORY_DATA_TYPES.includes(definition.dataType)) {
      throw new HttpError(400, 'Bad Request', `Organization metadata ${definition.name} is ${definition.dataType}: only category types have options.`);
    }
    const option = { objectIdentifier: ctx.newId(), name: req.body.name };
    store.addOption(definition.objectIdentifier, option);
    return option;
  });

  app.get<{ Params: OptionParams }>(`${PREFIX}/:objectIdentifier`, { schema: { params: optionParams } }, async (req) => optionOf(req).option);

  app.put<{ Params: OptionParams; Body: { name: string } }>(
    `${PREFIX}/:objectIdentifier`,
    { schema: { params: optionParams, body: nameBody } },
    async (req) => {
      ctx.requireWrite(req);
      const { definition, option } = optionOf(req);
      store.rename(definition.objectIdentifier, option.objectIdentifier, req.body.name);
      return { ...option, name: req.body.name };
    },
  );

  app.delete<{ Params: OptionParams }>(`${PREFIX}/:objectIdentifier`, { schema: { params: optionParams } }, async (req, reply) => {
    ctx.requireWrite(req);
    const { definition, option } = optionOf(req);
    store.remove(definition.objectIdentifier, option.objectIdentifier);
    return reply.code(204).send();
  });
};
