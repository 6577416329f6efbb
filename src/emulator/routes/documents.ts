// Documents of a project: list, streamed multipart upload, failed-upload records,
// and two extensions: folder creation and content download.
import type { FastifyRequest } from 'fastify';
import type { CoreContext, CoreRoutePlugin } from '../core-context.js';
import { HttpError } from '../context.js';
import { renderDocument } from '../service/document-view.js';
import {
  COORDINATE_EXTRACTION_STRATEGIES,
  DOCUMENT_INDEXING_STATUSES,
  DOCUMENT_UPLOAD_SOURCES,
  ITEM_SORTING,
  OCR_ENGINES,
  OCR_STRATEGIES,
  TABLE_COLUMN_TYPES,
  UPLOAD_DEFAULTS,
} from '../service/enums.js';
import { extensionOf } from '../service/file-kinds.js';
import { discardForm, malformed, readForm } from '../http/multipart-form.js';
import { DOCUMENT_COLUMNS, type DocumentMetadataEntry, type DocumentRecord, type ListedDocument } from '../state/documents.js';
import { ITEM_FILTERING, type ItemFiltering } from '../state/list-query.js';
import type { ProjectRecord } from '../state/projects.js';
import { ownerOf, visibleProject } from './access.js';
import { descQuery, objectSchema, pageWindow, type Paging, pagingQuery, uuid } from './schemas.js';
import { sendContent } from '../http/content-range.js';

interface ListQuery extends Paging {
  parentObjectIdentifier?: string;
  flattenList: boolean;
  searchText?: string;
  hidePackagedFiles: boolean;
  includePath: boolean;
  indexingStatus?: string;
  uploadObjectIdentifier?: string;
  sorting: string;
  desc: boolean;
  filterColumn?: string;
  filterOperation?: ItemFiltering;
  filterSearchTerm?: string;
  columnType: 'int' | 'string';
}

interface UploadQuery {
  documentUploadIdentifier: string;
  parentObjectIdentifier?: string;
  source?: string;
}

interface FailedUploadBody {
  fileName: string;
  contentType: string;
  size?: number | null;
  documentUploadObjectIdentifier?: string | null;
  parentObjectIdentifier?: string | null;
}

interface FolderBody {
  name: string;
  parentObjectIdentifier?: string | null;
}

type ProjectParams = { projectIdentifier: string };
type Folder = { objectIdentifier: string; name: string };

const projectParams = objectSchema({ projectIdentifier: uuid }, ['projectIdentifier']);
const UPLOAD_FORM_ENUMS: Record<string, readonly string[]> = {
  ocrEngine: OCR_ENGINES,
  ocrStrategy: OCR_STRATEGIES,
  coordinateExtractionStrategy: COORDINATE_EXTRACTION_STRATEGIES,
};

export const documentRoutes: CoreRoutePlugin = (app, ctx) => {
  const { documents } = ctx.stores;

  ctx.events.on('projectDeleted', ({ projectIdentifier }: { projectIdentifier: string }) => {
    for (const key of documents.removeProject(projectIdentifier)) ctx.blobs.delete(key);
  });

  const view = (document: ListedDocument, path?: string | null) => renderDocument(document, { url: (d) => ctx.documentUrl(d), path: path ?? null });

  /** The folder, which must be a directory of this project (400 otherwise: it is an input, not the resource). */
  const folderOf = (project: ProjectRecord, folderIdentifier: string | null | undefined): Folder | null => {
    if (!folderIdentifier) return null;
    const folder = documents.glance(project.objectIdentifier, folderIdentifier);
    if (!folder?.isDirectory) throw new HttpError(400, 'Bad Request', `${folderIdentifier} is not a folder of this project.`);
    return { objectIdentifier: folderIdentifier, name: folder.name };
  };

  /** What was just stored, as find would read it back: new, so it has no children. */
  const created = (document: DocumentRecord, parent: Folder | null): ListedDocument => ({ ...document, parentName: parent?.name ?? null, hasChildren: false });

  app.get<{ Params: ProjectParams; Querystring: ListQuery }>(
    '/projects/:projectIdentifier/documents',
    {
      schema: {
        params: projectParams,
        querystring: objectSchema({
          ...pagingQuery,
          ...descQuery,
          parentObjectIdentifier: uuid,
          flattenList: { type: 'boolean', default: false },
          searchText: { type: 'string' },
          hidePackagedFiles: { type: 'boolean', default: true },
          includePath: { type: 'boolean', default: false },
          indexingStatus: { type: 'string', enum: DOCUMENT_INDEXING_STATUSES },
          uploadObjectIdentifier: uuid,
          sorting: { type: 'string', enum: ITEM_SORTING, default: 'dateAdded' },
          filterColumn: { type: 'string', enum: ITEM_SORTING },
          filterOperation: { type: 'string', enum: ITEM_FILTERING },
          filterSearchTerm: { type: 'string' },
          columnType: { type: 'string', enum: TABLE_COLUMN_TYPES, default: 'string' },
        }),
      },
    },
    async (req) => {
      const project = visibleProject(ctx, req, req.params.projectIdentifier);
      const q = req.query;
      const sortColumn = documentColumn(q.sorting, 'sorting');
      const filter = columnFilter(q);
      const result = documents.list({
        tenant: project.tenant,
        projectIdentifier: project.objectIdentifier,
        parentIdentifier: folderOf(project, q.parentObjectIdentifier)?.objectIdentifier ?? null,
        flatten: q.flattenList,
        ...(q.searchText ? { searchText: q.searchText } : {}),
        ...(q.indexingStatus ? { indexingStatus: q.indexingStatus } : {}),
        ...(q.uploadObjectIdentifier ? { uploadIdentifier: q.uploadObjectIdentifier } : {}),
        sortExpression: sortColumn.sort,
        desc: q.desc,
        ...(filter ? { filter } : {}),
        ...pageWindow(q),
      });
      const folders = q.includePath ? documents.folderLookup(project.objectIdentifier) : undefined;
      const items = result.items.map((d) => view(d, folders && pathOf(d, folders)));
      return { items, totalCount: result.totalCount };
    },
  );

  app.post<{ Params: ProjectParams; Querystring: UploadQuery }>(
    '/projects/:projectIdentifier/documents',
    {
      schema: {
        params: projectParams,
        querystring: objectSchema(
          { documentUploadIdentifier: uuid, parentObjectIdentifier: uuid, source: { type: 'string', enum: DOCUMENT_UPLOAD_SOURCES } },
          ['documentUploadIdentifier'],
        ),
      },
    },
    async (req) => {
      ctx.requireWrite(req);
      const project = visibleProject(ctx, req, req.params.projectIdentifier);
      const parent = folderOf(project, req.query.parentObjectIdentifier);
      const upload = await receiveUpload(ctx, req);
      const document: DocumentRecord = {
        objectIdentifier: upload.objectIdentifier,
        tenant: project.tenant,
        projectIdentifier: project.objectIdentifier,
        parentIdentifier: parent?.objectIdentifier ?? null,
        name: upload.fileName,
        isDirectory: false,
        uploadIdentifier: req.query.documentUploadIdentifier,
        contentType: upload.contentType,
        size: upload.size,
        dateAdded: ctx.now(),
        uploadSuccessful: null,
        uploadInProgress: true,
        uploadFailedReason: null,
        indexingNotPossible: null,
        unsupportedFileType: null,
        fileType: 'unknown',
        extension: extensionOf(upload.fileName),
        progress: 0,
        tokenCount: null,
        pageCount: null,
        ocrCreditsCost: null,
        layoutCreditsCost: null,
        ocrStrategy: upload.fields.ocrStrategy ?? UPLOAD_DEFAULTS.ocrStrategy,
        ocrEngine: upload.fields.ocrEngine ?? UPLOAD_DEFAULTS.ocrEngine,
        coordinateExtractionStrategy: upload.fields.coordinateExtractionStrategy ?? UPLOAD_DEFAULTS.coordinateExtractionStrategy,
        source: req.query.source ?? UPLOAD_DEFAULTS.source,
        metadata: upload.metadata,
        owner: ownerOf(ctx, req),
        blobKey: upload.blobKey,
        processingPending: true,
      };
      documents.add(document);
      ctx.processor.schedule(document);
      return view(created(document, parent));
    },
  );

  app.post<{ Params: ProjectParams; Body: FailedUploadBody }>(
    '/projects/:projectIdentifier/documents/failed',
    {
      schema: {
        params: projectParams,
        body: objectSchema(
          {
            fileName: { type: 'string', minLength: 1 },
            contentType: { type: 'string' },
            size: { type: ['integer', 'null'], minimum: 0, maximum: 2147483647 },
            documentUploadObjectIdentifier: { type: ['string', 'null'], format: 'uuid' },
            parentObjectIdentifier: { type: ['string', 'null'], format: 'uuid' },
          },
          ['fileName', 'contentType'],
        ),
      },
    },
    async (req) => {
      ctx.requireWrite(req);
      const project = visibleProject(ctx, req, req.params.projectIdentifier);
      const body = req.body;
      const parent = folderOf(project, body.parentObjectIdentifier);
      const document: DocumentRecord = {
        ...emptyDocument(ctx, req, project, ctx.newId()),
        parentIdentifier: parent?.objectIdentifier ?? null,
        name: body.fileName,
        uploadIdentifier: body.documentUploadObjectIdentifier ?? ctx.newId(),
        contentType: body.contentType,
        size: body.size ?? null,
        uploadSuccessful: false,
        uploadFailedReason: 'uploadFailure',
        indexingNotPossible: false,
        unsupportedFileType: false,
        extension: extensionOf(body.fileName),
        progress: 0,
      };
      documents.add(document);
      return view(created(document, parent));
    },
  );

  // Extension (not in the spec): folders, so documents can be organised and listed by parent.
  // Absent under --strict / --folders none: the route answers 404 like any unknown one.
  if (ctx.modes.folders === 'extension') app.post<{ Params: ProjectParams; Body: FolderBody }>(
    '/projects/:projectIdentifier/folders',
    {
      schema: {
        params: projectParams,
        body: objectSchema(
          { name: { type: 'string', minLength: 1, pattern: '^[^/\\\\]+$' }, parentObjectIdentifier: { type: ['string', 'null'], format: 'uuid' } },
          ['name'],
        ),
      },
    },
    async (req, reply) => {
      ctx.requireWrite(req);
      const project = visibleProject(ctx, req, req.params.projectIdentifier);
      const parent = folderOf(project, req.body.parentObjectIdentifier);
      if (documents.nameTaken(project.objectIdentifier, parent?.objectIdentifier ?? null, req.body.name, ctx.modes.folderCase === 'sensitive')) {
        throw new HttpError(409, 'Conflict', `An item named ${req.body.name} already exists in this folder.`);
      }
      const objectIdentifier = ctx.newId();
      const folder: DocumentRecord = {
        ...emptyDocument(ctx, req, project, objectIdentifier),
        parentIdentifier: parent?.objectIdentifier ?? null,
        name: req.body.name,
        isDirectory: true,
        uploadIdentifier: objectIdentifier,
        fileType: 'directory',
      };
      documents.add(folder);
      return reply.code(201).send(view(created(folder, parent)));
    },
  );

  // Extension (not in the spec): the stored bytes of a document; every Document's `url` points here.
  // Absent under --strict: `url` is then a signed, expiring link to the stored bytes.
  if (ctx.modes.contentRoute) app.get<{ Params: ProjectParams & { documentIdentifier: string } }>(
    '/projects/:projectIdentifier/documents/:documentIdentifier/content',
    { schema: { params: objectSchema({ projectIdentifier: uuid, documentIdentifier: uuid }) } },
    async (req, reply) => {
      const project = visibleProject(ctx, req, req.params.projectIdentifier);
      const document = documents.find(project.tenant, project.objectIdentifier, req.params.documentIdentifier);
      const content = document?.blobKey ? ctx.blobs.get(document.blobKey) : undefined;
      if (!document || !content) throw new HttpError(404, 'Not Found', `Document ${req.params.documentIdentifier} has no content.`);
      reply.header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(document.name)}`);
      return sendContent(req, reply, ctx.blobs, ctx.modes, { key: document.blobKey!, size: document.size ?? 0, etag: `"${document.blobKey}"`, lastModified: new Date(document.dateAdded), type: 'application/octet-stream' }, content, ctx.faults.corruptsContent());
    },
  );
};

/** The shared fields of a document that has no stored content (folders, failed-upload records). */
function emptyDocument(ctx: CoreContext, req: FastifyRequest, project: ProjectRecord, objectIdentifier: string): DocumentRecord {
  return {
    objectIdentifier,
    tenant: project.tenant,
    projectIdentifier: project.objectIdentifier,
    parentIdentifier: null,
    name: '',
    isDirectory: false,
    uploadIdentifier: objectIdentifier,
    contentType: null,
    size: null,
    dateAdded: ctx.now(),
    uploadSuccessful: null,
    uploadInProgress: false,
    uploadFailedReason: null,
    indexingNotPossible: null,
    unsupportedFileType: null,
    fileType: 'unknown',
    extension: null,
    progress: null,
    tokenCount: null,
    pageCount: null,
    ocrCreditsCost: null,
    layoutCreditsCost: null,
    ...UPLOAD_DEFAULTS,
    metadata: null,
    owner: ownerOf(ctx, req),
    blobKey: null,
    processingPending: false,
  };
}

interface ReceivedUpload {
  objectIdentifier: string;
  blobKey: string;
  fileName: string;
  contentType: string;
  size: number;
  fields: Partial<Record<'ocrEngine' | 'ocrStrategy' | 'coordinateExtractionStrategy', string>>;
  metadata: DocumentMetadataEntry[] | null;
}

/** Streams the `file` part into the blob store, then checks the other form fields (which may come before or after it). */
async function receiveUpload(ctx: CoreContext, req: FastifyRequest): Promise<ReceivedUpload> {
  const objectIdentifier = ctx.newId();
  const form = await readForm(req, ctx, { file: `documents/${objectIdentifier}` }, ctx.modes.formOrder);
  try {
    const file = form.files.file;
    if (!file) throw malformed('The form has no "file" part.');
    // Only the empty name is refused: a name of spaces, or a lone U+FEFF, is still a name.
    if (file.fileName === '') throw malformed('The "file" part has no file name.');
    const { fields } = form;
    for (const [field, allowed] of Object.entries(UPLOAD_FORM_ENUMS)) {
      const value = fields[field];
      if (value !== undefined && value !== '' && !allowed.includes(value)) {
        throw malformed(`${field} must be one of ${allowed.join(', ')}.`);
      }
    }
    const formSettings = Object.fromEntries(Object.keys(UPLOAD_FORM_ENUMS).filter((f) => fields[f]).map((f) => [f, fields[f] as string]));
    return {
      objectIdentifier,
      blobKey: file.blobKey,
      fileName: file.fileName,
      contentType: file.contentType,
      size: file.size,
      fields: formSettings,
      metadata: parseMetadataJson(ctx, fields.metadataJson),
    };
  } catch (error) {
    discardForm(ctx.blobs, form);
    throw error;
  }
}

/** metadataJson: a JSON object of string keys to string values. */
function parseMetadataJson(ctx: CoreContext, text: string | undefined): DocumentMetadataEntry[] | null {
  if (text === undefined || text.trim() === '') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw malformed('metadataJson is not valid JSON.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.values(parsed).some((v) => typeof v !== 'string')) {
    throw malformed('metadataJson must be a JSON object of string values.');
  }
  // `--metadata dropped`: accepted, checked, and not kept, as a service that ignores the field would.
  if (ctx.modes.metadata === 'dropped') return null;
  return Object.entries(parsed as Record<string, string>).map(([key, value]) => ({ objectIdentifier: ctx.newId(), key, value }));
}

function documentColumn(name: string, parameter: string): (typeof DOCUMENT_COLUMNS)[string] {
  const column = DOCUMENT_COLUMNS[name];
  if (!column) {
    throw new HttpError(400, 'Bad Request', `${parameter} ${name} is not a document column (use one of ${Object.keys(DOCUMENT_COLUMNS).join(', ')}).`);
  }
  return column;
}

function columnFilter(q: ListQuery) {
  if (!q.filterColumn) return undefined;
  if (!q.filterOperation || q.filterSearchTerm === undefined) {
    throw new HttpError(400, 'Bad Request', 'filterColumn needs filterOperation and filterSearchTerm.');
  }
  const column = documentColumn(q.filterColumn, 'filterColumn');
  const numeric = q.columnType === 'int';
  if (numeric && !Number.isFinite(Number(q.filterSearchTerm))) {
    throw new HttpError(400, 'Bad Request', 'filterSearchTerm must be a number when columnType is int.');
  }
  return {
    numericExpression: column.numeric,
    textExpression: column.text,
    operation: q.filterOperation,
    term: numeric ? Number(q.filterSearchTerm) : q.filterSearchTerm,
    numeric,
  };
}

function pathOf(document: ListedDocument, folder: (id: string) => { name: string; parent: string | null } | undefined): string {
  const segments = [document.name];
  for (let id = document.parentIdentifier; id; ) {
    const f = folder(id);
    segments.unshift(f?.name ?? '');
    id = f?.parent ?? null;
  }
  return `/${segments.join('/')}`;
}
