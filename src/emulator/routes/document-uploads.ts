// Playbook document uploads: batches that documents join by being uploaded with
// documentUploadIdentifier = the batch's id. A batch completes once it was marked complete and
// none of its documents is processing any more; completing notifies the tenant's users once.
import type { FastifyRequest } from 'fastify';
import type { EmulatorEvents } from '../context.js';
import type { CoreContext, CoreRoutePlugin } from '../core-context.js';
import type { DocumentUploadRecord } from '../state/document-uploads.js';
import type { PlaybookStores } from '../state/playbook-stores.js';
import { notFound, type PlaybookItemParams, playbookItemParams, type PlaybookParams, playbookParams, visiblePlaybook } from './playbook-access.js';
import { descQuery, objectSchema, pageWindow, type Paging, pagingQuery } from './schemas.js';

const PREFIX = '/playbooks/:playbookIdentifier/document-uploads';
const ONE = `${PREFIX}/:objectIdentifier`;

interface ListQuery extends Paging {
  searchText?: string;
  sorting: 'dateAdded' | 'name';
  desc: boolean;
}

function renderUpload(upload: DocumentUploadRecord) {
  return {
    objectIdentifier: upload.objectIdentifier,
    name: upload.name,
    dateAdded: upload.dateAdded,
    dateCompleted: upload.dateCompleted,
    fileCount: upload.fileCount,
  };
}

export const documentUploadRoutes: CoreRoutePlugin = (app, ctx) => {
  const stores = ctx.stores.playbook;
  const completeIfProcessed = completer(ctx, stores);

  ctx.events.on('documentProcessed', (processed: EmulatorEvents['documentProcessed']) => {
    // Runs inside document processing: a failure here is logged, not thrown into the processor.
    try {
      const upload = stores.documentUploads.awaitingCompletion(processed.tenant, processed.uploadIdentifier);
      if (upload) completeIfProcessed(upload);
    } catch (error) {
      app.log.error({ err: error, uploadIdentifier: processed.uploadIdentifier }, 'completing a document upload failed');
    }
  });

  const uploadOf = (req: FastifyRequest<{ Params: PlaybookItemParams }>) => {
    const playbook = visiblePlaybook(ctx, stores, req, req.params.playbookIdentifier);
    const upload = stores.documentUploads.find(playbook.objectIdentifier, req.params.objectIdentifier);
    if (!upload) throw notFound('Document upload', req.params.objectIdentifier);
    return upload;
  };

  app.get<{ Params: PlaybookParams; Querystring: ListQuery }>(
    PREFIX,
    {
      schema: {
        params: playbookParams,
        querystring: objectSchema({
          ...pagingQuery,
          ...descQuery,
          searchText: { type: 'string' },
          sorting: { type: 'string', enum: ['dateAdded', 'name'], default: 'dateAdded' },
        }),
      },
    },
    async (req) => {
      const playbook = visiblePlaybook(ctx, stores, req, req.params.playbookIdentifier);
      const { searchText, sorting, desc } = req.query;
      return stores.documentUploads
        .list(playbook.objectIdentifier, { ...(searchText ? { searchText } : {}), sortByName: sorting === 'name', desc, ...pageWindow(req.query) })
        .map(renderUpload);
    },
  );

  app.post<{ Params: PlaybookParams; Body: { name: string; fileCount?: number | null } }>(
    PREFIX,
    {
      schema: {
        params: playbookParams,
        body: objectSchema({ name: { type: 'string', minLength: 1 }, fileCount: { type: ['integer', 'null'], minimum: 0, maximum: 2147483647 } }, ['name']),
      },
    },
    async (req, reply) => {
      ctx.requireWrite(req);
      const playbook = visiblePlaybook(ctx, stores, req, req.params.playbookIdentifier);
      const upload: DocumentUploadRecord = {
        objectIdentifier: ctx.newId(),
        tenant: playbook.tenant,
        playbookIdentifier: playbook.objectIdentifier,
        name: req.body.name,
        fileCount: req.body.fileCount ?? null,
        dateAdded: ctx.now(),
        completeRequested: false,
        dateCompleted: null,
      };
      stores.documentUploads.add(upload);
      return reply.code(201).send(renderUpload(upload));
    },
  );

  app.get<{ Params: PlaybookItemParams }>(ONE, { schema: { params: playbookItemParams } }, async (req) => renderUpload(uploadOf(req)));

  app.delete<{ Params: PlaybookItemParams }>(ONE, { schema: { params: playbookItemParams } }, async (req, reply) => {
    ctx.requireWrite(req);
    const upload = uploadOf(req);
    stores.documentUploads.remove(upload.playbookIdentifier, upload.objectIdentifier);
    return reply.code(204).send();
  });

  app.get<{ Params: PlaybookItemParams }>(`${ONE}/details`, { schema: { params: playbookItemParams } }, async (req) => {
    const upload = uploadOf(req);
    return { ...renderUpload(upload), ...ctx.uploadStats(upload.tenant, upload.objectIdentifier) };
  });

  app.patch<{ Params: PlaybookItemParams }>(`${ONE}/complete`, { schema: { params: playbookItemParams } }, async (req) => {
    ctx.requireWrite(req);
    const upload = uploadOf(req);
    if (upload.dateCompleted) return renderUpload(upload);
    stores.documentUploads.requestCompletion(upload.objectIdentifier);
    // --date-completed at-patch: the other reading of the spec, completed while documents still process.
    return renderUpload(completeIfProcessed({ ...upload, completeRequested: true }, ctx.modes.dateCompleted === 'at-patch'));
  });
};

/** Completes an upload marked complete once nothing of it is processing; the completion notifies once. */
function completer(ctx: CoreContext, stores: PlaybookStores) {
  return (upload: DocumentUploadRecord, now = false): DocumentUploadRecord => {
    const stats = ctx.uploadStats(upload.tenant, upload.objectIdentifier);
    if (stats.processingDocumentCount > 0 && !now) return upload;
    const dateCompleted = ctx.now();
    ctx.db.transaction(() => {
      if (!stores.documentUploads.complete(upload.objectIdentifier, dateCompleted)) return;
      ctx.notify(upload.tenant, {
        type: 'documentUploadCompleted',
        title: `Document upload "${upload.name}" completed`,
        message: `${stats.totalDocumentCount} document(s): ${stats.completedDocumentCount} completed, ${stats.failedDocumentCount} failed.`,
        resourceIdentifiers: { playbookObjectIdentifier: upload.playbookIdentifier, documentUploadObjectIdentifier: upload.objectIdentifier },
      });
    })();
    return { ...upload, dateCompleted };
  };
}
