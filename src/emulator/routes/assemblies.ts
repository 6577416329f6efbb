// Assemblies of a playbook: fields, the template file (multipart in, streamed out, or through a
// signed download URL) and the rich-text tree.
import type { FastifyRequest } from 'fastify';
import type { BlobStore } from '../context.js';
import type { CoreContext, CoreRoutePlugin } from '../core-context.js';
import { rejectDeepBodies } from '../http/body-depth.js';
import { discardForm, malformed, readForm, type ReceivedForm } from '../http/multipart-form.js';
import { EMPTY_DOCUMENT, type RichTextNode, richTextNodeSchema } from '../service/rich-text.js';
import type { AssemblyRecord } from '../state/assemblies.js';
import { ownerOf } from './access.js';
import { notFound, type PlaybookItemParams, playbookItemParams, type PlaybookParams, playbookParams, visibleAssembly, visiblePlaybook } from './playbook-access.js';
import { objectSchema, PAGE_DEFAULTS, pageWindow, type Paging } from './schemas.js';

const PREFIX = '/playbooks/:playbookIdentifier/assemblies';
const ONE = `${PREFIX}/:objectIdentifier`;
/** How long an assembly download URL works. */
const DOWNLOAD_URL_TTL_SECONDS = 15 * 60;
/** Rich-text trees of long templates are larger than fastify's default 1 MiB body limit. */
const RICH_TEXT_BODY_LIMIT = 32 * 1024 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function renderAssembly(assembly: AssemblyRecord) {
  return {
    objectIdentifier: assembly.objectIdentifier,
    name: assembly.name,
    description: assembly.description,
    dateAdded: assembly.dateAdded,
    dateModified: assembly.dateModified,
    resourceOwner: assembly.owner,
    assemblyType: assembly.assemblyType,
    playbookGroupObjectIdentifier: assembly.playbookGroupIdentifier,
  };
}

/** A fresh blob key for an assembly's file (a replaced file keeps its old key until the new one is stored). */
function fileKey(ctx: CoreContext, assemblyIdentifier: string): string {
  return `assemblies/${assemblyIdentifier}/${ctx.newId()}`;
}

export const assemblyRoutes: CoreRoutePlugin = (app, ctx) => {
  const stores = ctx.stores.playbook;
  const assemblyOf = (req: FastifyRequest<{ Params: PlaybookItemParams }>) =>
    visibleAssembly(ctx, stores, req, req.params.playbookIdentifier, req.params.objectIdentifier);

  app.get<{ Params: PlaybookParams; Querystring: Paging & { searchText?: string } }>(
    PREFIX,
    {
      schema: {
        params: playbookParams,
        querystring: objectSchema({
          pageSize: { type: 'integer', minimum: 1, maximum: PAGE_DEFAULTS.maxPageSize, default: 100 },
          pageNumber: { type: 'integer', minimum: 1, default: 1 },
          searchText: { type: 'string' },
        }),
      },
    },
    async (req) => {
      const playbook = visiblePlaybook(ctx, stores, req, req.params.playbookIdentifier);
      const { limit, offset } = pageWindow(req.query);
      const result = stores.assemblies.page(playbook.objectIdentifier, req.query.searchText, limit, offset);
      return { items: result.items.map(renderAssembly), totalCount: result.totalCount };
    },
  );

  app.post<{ Params: PlaybookParams }>(PREFIX, { schema: { params: playbookParams } }, async (req) => {
    ctx.requireWrite(req);
    const playbook = visiblePlaybook(ctx, stores, req, req.params.playbookIdentifier);
    const objectIdentifier = ctx.newId();
    const form = await readForm(req, ctx, { File: fileKey(ctx, objectIdentifier) });
    const fields = checkedAssemblyFields(ctx.blobs, form);
    const now = ctx.now();
    const file = form.files.File;
    const assembly: AssemblyRecord = {
      objectIdentifier,
      playbookIdentifier: playbook.objectIdentifier,
      ...fields,
      dateAdded: now,
      dateModified: now,
      owner: ownerOf(ctx, req),
      file: file ? { blobKey: file.blobKey, fileName: file.fileName, size: file.size } : null,
      richText: null,
    };
    stores.assemblies.add(assembly);
    return renderAssembly(assembly);
  });

  app.get<{ Params: PlaybookItemParams }>(ONE, { schema: { params: playbookItemParams } }, async (req) => renderAssembly(assemblyOf(req)));

  app.delete<{ Params: PlaybookItemParams }>(ONE, { schema: { params: playbookItemParams } }, async (req, reply) => {
    ctx.requireWrite(req);
    const assembly = assemblyOf(req);
    stores.assemblies.remove(assembly);
    if (assembly.file) ctx.blobs.delete(assembly.file.blobKey);
    return reply.code(200).send();
  });

  app.get<{ Params: PlaybookItemParams; Querystring: { usePdf: boolean } }>(
    `${ONE}/content`,
    { schema: { params: playbookItemParams, querystring: objectSchema({ usePdf: { type: 'boolean', default: false } }) } },
    async (req, reply) => {
      const assembly = assemblyOf(req);
      const content = assembly.file && ctx.blobs.get(assembly.file.blobKey);
      if (!assembly.file || !content) throw notFound('The file of assembly', assembly.objectIdentifier);
      // No converter at hand: usePdf serves the same bytes, labelled as PDF.
      return reply
        .type(req.query.usePdf ? 'application/pdf' : 'application/octet-stream')
        .header('content-length', String(assembly.file.size))
        .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(assembly.file.fileName)}`)
        .send(content);
    },
  );

  app.put<{ Params: PlaybookItemParams }>(`${ONE}/content`, { schema: { params: playbookItemParams } }, async (req) => {
    ctx.requireWrite(req);
    const assembly = assemblyOf(req);
    const form = await readForm(req, ctx, { file: fileKey(ctx, assembly.objectIdentifier) });
    const file = form.files.file;
    if (!file) throw malformed('The form has no "file" part.');
    const stored = { blobKey: file.blobKey, fileName: file.fileName, size: file.size };
    const updated: AssemblyRecord = { ...assembly, file: stored, dateModified: ctx.now() };
    stores.assemblies.setFile(assembly, stored, updated.dateModified);
    if (assembly.file) ctx.blobs.delete(assembly.file.blobKey);
    return renderAssembly(updated);
  });

  app.get<{ Params: PlaybookItemParams }>(`${ONE}/rich-text`, { schema: { params: playbookItemParams } }, async (req) => assemblyOf(req).richText ?? EMPTY_DOCUMENT);

  app.put<{ Params: PlaybookItemParams; Body: RichTextNode }>(
    `${ONE}/rich-text`,
    { bodyLimit: RICH_TEXT_BODY_LIMIT, preValidation: rejectDeepBodies, schema: { params: playbookItemParams, body: richTextNodeSchema } },
    async (req) => {
      ctx.requireWrite(req);
      const assembly = assemblyOf(req);
      stores.assemblies.setRichText(assembly, req.body, ctx.now());
      return req.body;
    },
  );

  app.get<{ Params: PlaybookItemParams }>(`${ONE}/download-url`, { schema: { params: playbookItemParams } }, async (req) => {
    const assembly = assemblyOf(req);
    if (!assembly.file) throw notFound('The file of assembly', assembly.objectIdentifier);
    const expiresAtSeconds = Math.floor(Date.parse(ctx.now()) / 1000) + DOWNLOAD_URL_TTL_SECONDS;
    return {
      url: ctx.signedBlobUrl(assembly.file.blobKey, DOWNLOAD_URL_TTL_SECONDS, 'application/octet-stream'),
      expiresAt: new Date(expiresAtSeconds * 1000).toISOString(),
    };
  });
};

/** The create form's text fields; a bad form deletes the file already stored from it. */
function checkedAssemblyFields(blobs: BlobStore, form: ReceivedForm) {
  try {
    const { Name: name, Description: description, Type: assemblyType, PlaybookGroupId: group } = form.fields;
    if (!name) throw malformed('Name is required.');
    if (description === undefined) throw malformed('Description is required.');
    if (!assemblyType) throw malformed('Type is required.');
    if (group && !UUID.test(group)) throw malformed('PlaybookGroupId must be a uuid.');
    return { name, description, assemblyType, playbookGroupIdentifier: group || null };
  } catch (error) {
    discardForm(blobs, form);
    throw error;
  }
}
