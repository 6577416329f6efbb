// Reference materials of a playbook. A locked material cannot be deleted (409).
import type { FastifyRequest } from 'fastify';
import { HttpError } from '../context.js';
import type { CoreRoutePlugin } from '../core-context.js';
import {
  newReferenceMaterial,
  referenceMaterialFields,
  type ReferenceMaterialInput,
  referenceMaterialInputSchema,
  type ReferenceMaterialUpdate,
  referenceMaterialUpdateSchema,
} from '../service/playbook-inputs.js';
import { notFound, type PlaybookItemParams, playbookItemParams, type PlaybookParams, playbookParams, visiblePlaybook } from './playbook-access.js';

const PREFIX = '/playbooks/:playbookIdentifier/reference-materials';

export const referenceMaterialRoutes: CoreRoutePlugin = (app, ctx) => {
  const stores = ctx.stores.playbook;

  const materialOf = (req: FastifyRequest<{ Params: PlaybookItemParams }>) => {
    const playbook = visiblePlaybook(ctx, stores, req, req.params.playbookIdentifier);
    const material = stores.referenceMaterials.find(playbook.objectIdentifier, req.params.objectIdentifier);
    if (!material) throw notFound('Reference material', req.params.objectIdentifier);
    return { playbook, material };
  };

  app.get<{ Params: PlaybookParams }>(PREFIX, { schema: { params: playbookParams } }, async (req) => {
    const playbook = visiblePlaybook(ctx, stores, req, req.params.playbookIdentifier);
    return stores.referenceMaterials.all(playbook.objectIdentifier);
  });

  app.post<{ Params: PlaybookParams; Body: ReferenceMaterialInput }>(
    PREFIX,
    { schema: { params: playbookParams, body: referenceMaterialInputSchema } },
    async (req, reply) => {
      ctx.requireWrite(req);
      const playbook = visiblePlaybook(ctx, stores, req, req.params.playbookIdentifier);
      const material = newReferenceMaterial(req.body, { newId: ctx.newId, now: ctx.now() });
      stores.referenceMaterials.add(playbook.objectIdentifier, material);
      return reply.code(201).send(material);
    },
  );

  app.get<{ Params: PlaybookItemParams }>(`${PREFIX}/:objectIdentifier`, { schema: { params: playbookItemParams } }, async (req) => materialOf(req).material);

  app.put<{ Params: PlaybookItemParams; Body: ReferenceMaterialUpdate }>(
    `${PREFIX}/:objectIdentifier`,
    { schema: { params: playbookItemParams, body: referenceMaterialUpdateSchema } },
    async (req) => {
      ctx.requireWrite(req);
      const { playbook, material } = materialOf(req);
      // Both identifiers, the type, the categories and dateAdded survive an update.
      const updated = { ...material, ...referenceMaterialFields(req.body) };
      stores.referenceMaterials.update(playbook.objectIdentifier, updated);
      return updated;
    },
  );

  app.delete<{ Params: PlaybookItemParams }>(`${PREFIX}/:objectIdentifier`, { schema: { params: playbookItemParams } }, async (req, reply) => {
    ctx.requireWrite(req);
    const { playbook, material } = materialOf(req);
    if (material.isLocked) throw new HttpError(409, 'Conflict', `Reference material ${material.objectIdentifier} is locked.`);
    stores.referenceMaterials.remove(playbook.objectIdentifier, material.objectIdentifier);
    return reply.code(204).send();
  });
};
