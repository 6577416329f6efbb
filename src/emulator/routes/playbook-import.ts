// POST /playbooks/import: stores the uploaded zip and answers 202 with a queued task. There is
// no call that reads a task: its end (success or failure) is told by a notification.
import type { CoreRoutePlugin } from '../core-context.js';
import { discardForm, malformed, readForm } from '../http/multipart-form.js';
import { PlaybookImporter } from '../service/playbook-importer.js';
import type { ImportTaskRecord } from '../state/playbook-imports.js';
import { ownerOf } from './access.js';

export const playbookImportRoutes: CoreRoutePlugin = (app, ctx) => {
  const stores = ctx.stores.playbook;
  const importer = new PlaybookImporter(ctx, stores, app.log);

  // Tasks a previous run (same dataDir) left queued or running start over.
  const enqueueUnfinished = () => {
    for (const task of stores.imports.unfinished()) importer.enqueue(task);
  };
  app.addHook('onReady', async () => enqueueUnfinished());
  // A state reset or restored holds tasks of its own: they start as they would after a restart.
  ctx.events.on('stateReplaced', enqueueUnfinished);
  app.addHook('onClose', async () => importer.close());

  app.post('/playbooks/import', async (req, reply) => {
    ctx.requireWrite(req);
    const taskIdentifier = ctx.newId();
    const form = await readForm(req, ctx, { importZip: `playbook-imports/${taskIdentifier}.zip` });
    const zip = form.files.importZip;
    if (!zip) {
      discardForm(ctx.blobs, form);
      throw malformed('The form has no "importZip" part.');
    }
    const task: ImportTaskRecord = {
      taskIdentifier,
      tenant: ctx.caller(req).tenant,
      status: 'queued',
      dateAdded: ctx.now(),
      owner: ownerOf(ctx, req),
      blobKey: zip.blobKey,
    };
    stores.imports.add(task);
    importer.enqueue(task);
    return reply.code(202).send({ taskObjectIdentifier: taskIdentifier, type: 'playbookImport', status: task.status });
  });
};
