// The calling user's notifications (created by the service's own events through ctx.notify).
import type { CoreRoutePlugin } from '../core-context.js';
import { HttpError } from '../context.js';
import { objectSchema, pageWindow, type Paging, pagingQuery, uuid } from './schemas.js';

const idParams = objectSchema({ objectIdentifier: uuid });

export const notificationRoutes: CoreRoutePlugin = (app, ctx) => {
  const { notifications } = ctx.stores;
  const notFound = (id: string) => new HttpError(404, 'Not Found', `Notification ${id} does not exist.`);

  app.get<{ Querystring: Paging }>('/notifications', { schema: { querystring: objectSchema(pagingQuery) } }, async (req) => {
    const caller = ctx.caller(req);
    const { limit, offset } = pageWindow(req.query);
    return notifications.page(caller.tenant, caller.userId, limit, offset).map((n) => ({
      objectIdentifier: n.objectIdentifier,
      dateAdded: n.dateAdded,
      isRead: n.isRead,
      title: n.title,
      message: n.message,
      type: n.type,
      resourceIdentifiers: n.resourceIdentifiers,
    }));
  });

  app.patch<{ Params: { objectIdentifier: string }; Body: { isRead?: boolean } | undefined }>(
    '/notifications/:objectIdentifier',
    { schema: { params: idParams, body: { type: ['object', 'null'], properties: { isRead: { type: 'boolean' } } } } },
    async (req, reply) => {
      ctx.requireWrite(req);
      const caller = ctx.caller(req);
      // isRead is optional: a PATCH without it marks the notification read.
      if (!notifications.markRead(caller.tenant, caller.userId, req.params.objectIdentifier, req.body?.isRead ?? true)) {
        throw notFound(req.params.objectIdentifier);
      }
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: { objectIdentifier: string } }>('/notifications/:objectIdentifier', { schema: { params: idParams } }, async (req, reply) => {
    ctx.requireWrite(req);
    const caller = ctx.caller(req);
    if (!notifications.remove(caller.tenant, caller.userId, req.params.objectIdentifier)) throw notFound(req.params.objectIdentifier);
    return reply.code(204).send();
  });
};
