// The metadata values of a playbook, and the category options of a category value.
import type { FastifyRequest } from 'fastify';
import { HttpError } from '../context.js';
import type { CoreRoutePlugin } from '../core-context.js';
import { type MetadataValueInput, metadataValueInputSchema, renderMetadataValue, type StoredMetadataValue } from '../service/metadata-values.js';
import { playbookMetadataValues } from '../service/playbook-inputs.js';
import { CATEGORY_DATA_TYPES } from '../state/organization-metadata.js';
import {
  notFound,
  type PlaybookItemParams,
  playbookItemParams,
  type PlaybookParams,
  playbookParams,
  visiblePlaybook,
} from './playbook-access.js';
import { objectSchema, pageWindow, type Paging, pagingQuery, uuid } from './schemas.js';

type UpdateBody = Omit<MetadataValueInput, 'categories'>;
type CategoryParams = PlaybookItemParams & { optionIdentifier: string };

const { categories: _categories, ...updateProperties } = metadataValueInputSchema.properties;
const updateBody = { type: 'object', properties: updateProperties };
const PREFIX = '/playbooks/:playbookIdentifier/metadata';

export const playbookMetadataRoutes: CoreRoutePlugin = (app, ctx) => {
  const stores = ctx.stores.playbook;
  const lookup = (tenant: string) => (id: string) => ctx.organizationMetadata(tenant, id);

  const valueOf = (req: FastifyRequest<{ Params: PlaybookItemParams }>) => {
    const playbook = visiblePlaybook(ctx, stores, req, req.params.playbookIdentifier);
    const value = stores.metadata.find(playbook.objectIdentifier, req.params.objectIdentifier);
    if (!value) throw notFound('Metadata value', req.params.objectIdentifier);
    return { playbook, value };
  };

  app.get<{ Params: PlaybookParams; Querystring: Paging & { searchText?: string } }>(
    PREFIX,
    { schema: { params: playbookParams, querystring: objectSchema({ ...pagingQuery, searchText: { type: 'string' } }) } },
    async (req) => {
      const playbook = visiblePlaybook(ctx, stores, req, req.params.playbookIdentifier);
      const rendered = stores.metadata.all(playbook.objectIdentifier).map((value) => renderMetadataValue(value, lookup(playbook.tenant)));
      const search = req.query.searchText?.toLocaleLowerCase('en-US');
      const matching = search
        ? rendered.filter((value) =>
            [(value.metadata as { name?: string } | undefined)?.name, value.text].some((text) => typeof text === 'string' && text.toLocaleLowerCase('en-US').includes(search)),
          )
        : rendered;
      const { limit, offset } = pageWindow(req.query);
      return matching.slice(offset, offset + limit);
    },
  );

  app.post<{ Params: PlaybookParams; Body: MetadataValueInput }>(
    PREFIX,
    { schema: { params: playbookParams, body: metadataValueInputSchema } },
    async (req, reply) => {
      ctx.requireWrite(req);
      const playbook = visiblePlaybook(ctx, stores, req, req.params.playbookIdentifier);
      const [value] = playbookMetadataValues([req.body], lookup(playbook.tenant), ctx.newId, stores.metadata.all(playbook.objectIdentifier)) as [StoredMetadataValue];
      stores.metadata.add(playbook.objectIdentifier, value);
      return reply.code(201).send(renderMetadataValue(value, lookup(playbook.tenant)));
    },
  );

  app.get<{ Params: PlaybookItemParams }>(`${PREFIX}/:objectIdentifier`, { schema: { params: playbookItemParams } }, async (req) => {
    const { playbook, value } = valueOf(req);
    return renderMetadataValue(value, lookup(playbook.tenant));
  });

  app.put<{ Params: PlaybookItemParams; Body: UpdateBody }>(
    `${PREFIX}/:objectIdentifier`,
    { schema: { params: playbookItemParams, body: updateBody } },
    async (req) => {
      ctx.requireWrite(req);
      const { playbook, value } = valueOf(req);
      // A PUT replaces the value's fields; its categories are not part of the body and stay.
      const input: MetadataValueInput = {
        isYes: req.body.isYes ?? null,
        decimalValue: req.body.decimalValue ?? null,
        text: req.body.text ?? null,
        date: req.body.date ?? null,
        singleCategoryIdentifier: req.body.singleCategoryIdentifier ?? null,
        categories: value.categories ?? null,
        organizationMetadataIdentifier: req.body.organizationMetadataIdentifier ?? value.organizationMetadataIdentifier,
      };
      const others = stores.metadata.all(playbook.objectIdentifier).filter((other) => other.objectIdentifier !== value.objectIdentifier);
      const [checked] = playbookMetadataValues([input], lookup(playbook.tenant), ctx.newId, others) as [StoredMetadataValue];
      const updated = { ...checked, objectIdentifier: value.objectIdentifier };
      stores.metadata.update(playbook.objectIdentifier, updated);
      return renderMetadataValue(updated, lookup(playbook.tenant));
    },
  );

  app.delete<{ Params: PlaybookItemParams }>(`${PREFIX}/:objectIdentifier`, { schema: { params: playbookItemParams } }, async (req, reply) => {
    ctx.requireWrite(req);
    const { playbook, value } = valueOf(req);
    stores.metadata.remove(playbook.objectIdentifier, value.objectIdentifier);
    return reply.code(204).send();
  });

  app.post<{ Params: PlaybookItemParams; Body: { optionIdentifier: string } }>(
    `${PREFIX}/:objectIdentifier/categories`,
    { schema: { params: playbookItemParams, body: objectSchema({ optionIdentifier: uuid }, ['optionIdentifier']) } },
    async (req, reply) => {
      ctx.requireWrite(req);
      const { playbook, value } = valueOf(req);
      const definition = ctx.organizationMetadata(playbook.tenant, value.organizationMetadataIdentifier);
      const option = req.body.optionIdentifier;
      if (!definition || !CATEGORY_DATA_TYPES.includes(definition.dataType)) {
        throw new HttpError(400, 'Bad Request', 'Only values of category metadata take categories.');
      }
      if (!definition.options.some((candidate) => candidate.objectIdentifier === option)) {
        throw new HttpError(400, 'Bad Request', `${option} is not an option of organization metadata ${definition.name}.`);
      }
      // A single-category value holds one option, which the new one replaces; adding an option twice changes nothing.
      const updated: StoredMetadataValue =
        definition.dataType === 'singleCategory'
          ? { ...value, singleCategoryIdentifier: option }
          : { ...value, categories: [...new Set([...(value.categories ?? []), option])] };
      stores.metadata.update(playbook.objectIdentifier, updated);
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: CategoryParams }>(
    `${PREFIX}/:objectIdentifier/categories/:optionIdentifier`,
    { schema: { params: objectSchema({ playbookIdentifier: uuid, objectIdentifier: uuid, optionIdentifier: uuid }) } },
    async (req, reply) => {
      ctx.requireWrite(req);
      const { playbook, value } = valueOf(req);
      const option = req.params.optionIdentifier;
      const inCategories = value.categories?.includes(option) ?? false;
      if (!inCategories && value.singleCategoryIdentifier !== option) throw notFound('Category', option);
      stores.metadata.update(playbook.objectIdentifier, {
        ...value,
        categories: inCategories ? (value.categories ?? []).filter((id) => id !== option) : (value.categories ?? null),
        singleCategoryIdentifier: value.singleCategoryIdentifier === option ? null : (value.singleCategoryIdentifier ?? null),
      });
      return reply.code(204).send();
    },
  );
};
