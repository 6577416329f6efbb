// The model catalogue, served only on the settings host (path prefix /settings).
import type { CoreRoutePlugin } from '../core-context.js';
import { HttpError } from '../context.js';
import { objectSchema, uuid } from './schemas.js';

export const SETTINGS_PREFIX = '/settings';

export const modelRoutes: CoreRoutePlugin = (app, ctx) => {
  const { models } = ctx.stores;

  app.get<{ Querystring: { modelType?: number; includeDisabled: boolean } }>(
    `${SETTINGS_PREFIX}/models`,
    { schema: { querystring: objectSchema({ modelType: { type: 'integer' }, includeDisabled: { type: 'boolean', default: false } }) } },
    async (req) =>
      models
        .all()
        .filter((entry) => (req.query.includeDisabled || entry.enabled) && (req.query.modelType === undefined || entry.modelType === req.query.modelType))
        .map((entry) => entry.model),
  );

  // Disabled models are still found by id: old messages refer to them.
  app.get<{ Querystring: { modelIdentifiers?: string[] } }>(
    `${SETTINGS_PREFIX}/models/get-by-identifiers`,
    { schema: { querystring: objectSchema({ modelIdentifiers: { type: 'array', items: uuid } }) } },
    async (req) =>
      (req.query.modelIdentifiers ?? []).flatMap((id) => {
        const entry = models.find(id);
        return entry ? [entry.model] : [];
      }),
  );

  app.get<{ Params: { objectIdentifier: string } }>(
    `${SETTINGS_PREFIX}/models/:objectIdentifier`,
    { schema: { params: objectSchema({ objectIdentifier: uuid }) } },
    async (req) => {
      const entry = models.find(req.params.objectIdentifier);
      if (!entry) throw new HttpError(404, 'Not Found', `Model ${req.params.objectIdentifier} does not exist.`);
      return entry.model;
    },
  );
};
