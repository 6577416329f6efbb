// Documents and folders of projects, with their processing outcome.
import type Database from 'better-sqlite3';
import type { UploadStats } from '../context.js';
import { applyMigrations } from './database.js';
import { type ColumnFilter, filterClause, StatementCache } from './list-query.js';
import { listedCondition } from './listing-lag.js';
import type { Owner } from './projects.js';

export const UPLOAD_FAILED_REASONS = [
  'outOfMemory',
  'unsupportedFileType',
  'badFile',
  'uploadFailure',
  'ocrPageLimitExceeded',
  'unknownException',
  'insufficientCredits',
  'maliciousFile',
  'fileScanTimedOut',
] as const;
export type UploadFailedReason = (typeof UPLOAD_FAILED_REASONS)[number];

export interface DocumentMetadataEntry {
  objectIdentifier: string;
  key: string;
  value: string;
}

export interface DocumentRecord {
  objectIdentifier: string;
  tenant: string;
  projectIdentifier: string;
  parentIdentifier: string | null;
  name: string;
  isDirectory: boolean;
  uploadIdentifier: string;
  contentType: string | null;
  size: number | null;
  dateAdded: string;
  uploadSuccessful: boolean | null;
  uploadInProgress: boolean;
  uploadFailedReason: UploadFailedReason | null;
  indexingNotPossible: boolean | null;
  unsupportedFileType: boolean | null;
  fileType: string;
  extension: string | null;
  progress: number | null;
  tokenCount: number | null;
  pageCount: number | null;
  ocrCreditsCost: number | null;
  layoutCreditsCost: number | null;
  ocrStrategy: string;
  ocrEngine: string;
  coordinateExtractionStrategy: string;
  source: string;
  metadata: DocumentMetadataEntry[] | null;
  owner: Owner;
  blobKey: string | null;
  processingPending: boolean;
}

/** A document as listed: the record plus facts about its neighbours. */
export interface ListedDocument extends DocumentRecord {
  parentName: string | null;
  hasChildren: boolean;
}

/** What background processing decided about a document. */
export interface ProcessingOutcome {
  uploadSuccessful: boolean;
  uploadFailedReason: UploadFailedReason | null;
  indexingNotPossible: boolean;
  unsupportedFileType: boolean;
  fileType: string;
  extension: string | null;
  contentType: string | null;
  pageCount: number | null;
  tokenCount: number | null;
  ocrCreditsCost: number | null;
  layoutCreditsCost: number | null;
}

/** ItemSorting names that a document has, with their SQL (numeric form, text form, sort form). */
export const DOCUMENT_COLUMNS: Record<string, { numeric: string; text: string; sort: string }> = {
  dateAdded: { numeric: 'd.date_added', text: 'd.date_added', sort: 'd.date_added' },
  name: { numeric: 'd.name', text: 'd.name', sort: 'fold_case(d.name)' },
  isDirectory: {
    numeric: 'd.is_directory',
    text: "CASE d.is_directory WHEN 1 THEN 'true' ELSE 'false' END",
    sort: 'd.is_directory',
  },
  extension: { numeric: 'd.extension', text: 'd.extension', sort: 'fold_case(d.extension)' },
  size: { numeric: 'd.size', text: 'd.size', sort: 'd.size' },
  pageCount: { numeric: 'd.page_count', text: 'd.page_count', sort: 'd.page_count' },
  ocrCreditsCost: { numeric: 'd.ocr_credits_cost', text: 'd.ocr_credits_cost', sort: 'd.ocr_credits_cost' },
  layoutCreditsCost: { numeric: 'd.layout_credits_cost', text: 'd.layout_credits_cost', sort: 'd.layout_credits_cost' },
  resourceOwner: { numeric: 'd.owner_name', text: 'd.owner_name', sort: 'fold_case(d.owner_name)' },
};

export const INDEXING_STATUS_CONDITIONS: Record<string, string> = {
  completed: 'd.upload_successful = 1',
  failed: 'd.upload_failed_reason IS NOT NULL',
  inProgress: 'd.upload_in_progress = 1',
};

export interface DocumentQuery {
  tenant: string;
  projectIdentifier: string;
  parentIdentifier: string | null;
  flatten: boolean;
  searchText?: string;
  indexingStatus?: string;
  uploadIdentifier?: string;
  sortExpression: string;
  desc: boolean;
  filter?: ColumnFilter;
  limit: number;
  offset: number;
}

interface DocumentRow {
  seq: number;
  object_identifier: string;
  tenant: string;
  project_identifier: string;
  parent_identifier: string | null;
  name: string;
  is_directory: number;
  upload_identifier: string;
  content_type: string | null;
  size: number | null;
  date_added: string;
  upload_successful: number | null;
  upload_in_progress: number;
  upload_failed_reason: UploadFailedReason | null;
  indexing_not_possible: number | null;
  unsupported_file_type: number | null;
  file_type: string;
  extension: string | null;
  progress: number | null;
  token_count: number | null;
  page_count: number | null;
  ocr_credits_cost: number | null;
  layout_credits_cost: number | null;
  ocr_strategy: string;
  ocr_engine: string;
  coordinate_extraction_strategy: string;
  source: string;
  metadata: string | null;
  owner_id: string;
  owner_name: string;
  owner_email: string;
  blob_key: string | null;
  processing_pending: number;
  parent_name?: string | null;
  has_children?: number;
}

const MIGRATIONS = [
  `CREATE TABLE documents (
     object_identifier TEXT PRIMARY KEY, tenant TEXT NOT NULL, project_identifier TEXT NOT NULL,
     parent_identifier TEXT, name TEXT NOT NULL, is_directory INTEGER NOT NULL, upload_identifier TEXT NOT NULL,
     content_type TEXT, size INTEGER, date_added TEXT NOT NULL, seq INTEGER NOT NULL,
     upload_successful INTEGER, upload_in_progress INTEGER NOT NULL, upload_failed_reason TEXT,
     indexing_not_possible INTEGER, unsupported_file_type INTEGER, file_type TEXT NOT NULL, extension TEXT,
     progress REAL, token_count INTEGER, page_count INTEGER, ocr_credits_cost REAL, layout_credits_cost REAL,
     ocr_strategy TEXT NOT NULL, ocr_engine TEXT NOT NULL, coordinate_extraction_strategy TEXT NOT NULL, source TEXT NOT NULL,
     metadata TEXT, owner_id TEXT NOT NULL, owner_name TEXT NOT NULL, owner_email TEXT NOT NULL,
     blob_key TEXT, processing_pending INTEGER NOT NULL);
   CREATE INDEX documents_by_folder ON documents (project_identifier, parent_identifier);
   CREATE INDEX documents_by_upload ON documents (tenant, upload_identifier);
   CREATE INDEX documents_pending ON documents (processing_pending) WHERE processing_pending = 1;
   CREATE INDEX documents_by_parent ON documents (parent_identifier);
   CREATE UNIQUE INDEX documents_by_seq ON documents (seq);`,
  // A project's listing in its default order (newest first) walks this index, page after page,
  // instead of sorting the tenant's documents for every page (what made a listing quadratic).
  `CREATE INDEX documents_by_project_date ON documents (tenant, project_identifier, date_added, seq);`,
  // A folder's own children in the default order come from this index alone. With only the one
  // above, the planner walked the whole project in date order to find them (1.2 s a folder at a
  // million documents); the folder index it replaces is a prefix of it.
  `CREATE INDEX documents_by_folder_date ON documents (project_identifier, parent_identifier, date_added, seq);
   DROP INDEX documents_by_folder;`,
  // Children are found through the folder index above (a folder's children are in its project):
  // one index fewer to write on every upload.
  `DROP INDEX documents_by_parent;`,
];

const LISTED_COLUMNS = `d.*, p.name AS parent_name,
  EXISTS (SELECT 1 FROM documents c WHERE c.project_identifier = d.project_identifier AND c.parent_identifier = d.object_identifier) AS has_children`;
const LISTED_FROM = 'documents d LEFT JOIN documents p ON p.object_identifier = d.parent_identifier';
const DESCENDANTS = `WITH RECURSIVE descendants(id) AS (
  SELECT object_identifier FROM documents WHERE project_identifier = @projectIdentifier AND parent_identifier = @parentIdentifier
  UNION ALL SELECT c.object_identifier FROM documents c JOIN descendants
    ON c.project_identifier = @projectIdentifier AND c.parent_identifier = descendants.id)`;

/**
 * Where each page of a listing ended, for listings read page after page, while nothing is written
 * (keyed by the listing's query; a few dozen kept, the oldest dropped).
 */
class ListingWalks {
  private readonly walks = new Map<string, { version: number; count?: number; ends: Map<number, { date: string; seq: number }> }>();

  of(key: string, version: number): { count?: number; ends: Map<number, { date: string; seq: number }> } {
    let walk = this.walks.get(key);
    if (!walk || walk.version !== version) walk = { version, ends: new Map() };
    this.walks.delete(key);
    this.walks.set(key, walk);
    if (this.walks.size > 64) this.walks.delete(this.walks.keys().next().value as string);
    // A long walk keeps its last ends only: the next page needs the one before it.
    if (walk.ends.size > 8) for (const k of [...walk.ends.keys()].slice(0, walk.ends.size - 8)) walk.ends.delete(k);
    return walk;
  }
}

export class DocumentStore {
  private readonly insert;
  private readonly selectOne;
  private readonly selectSibling;
  private readonly selectSiblingExact;
  private readonly selectPending;
  private readonly selectGlance;
  private readonly countFiles;
  private readonly selectOfProject;
  private readonly deleteOfProject;
  private readonly deleteOne;
  private readonly updateOutcome;
  private readonly selectUploadCounts;
  private readonly selectUploadReasons;
  private readonly selectUploadFileTypes;
  private readonly lists: StatementCache;
  /** Row changes made through this connection so far: any write ends what `walks` remembers. */
  private readonly changes;
  private readonly walks = new ListingWalks();

  constructor(private readonly db: Database.Database) {
    applyMigrations(db, 'documents', MIGRATIONS);
    this.lists = new StatementCache(db);
    this.changes = db.prepare<[], number>('SELECT total_changes()').pluck();
    this.insert = db.prepare(
      `INSERT INTO documents VALUES (
         @object_identifier, @tenant, @project_identifier, @parent_identifier, @name, @is_directory, @upload_identifier,
         @content_type, @size, @date_added, (SELECT coalesce(max(seq), 0) + 1 FROM documents),
         @upload_successful, @upload_in_progress, @upload_failed_reason, @indexing_not_possible, @unsupported_file_type,
         @file_type, @extension, @progress, @token_count, @page_count, @ocr_credits_cost, @layout_credits_cost,
         @ocr_strategy, @ocr_engine, @coordinate_extraction_strategy, @source, @metadata,
         @owner_id, @owner_name, @owner_email, @blob_key, @processing_pending)`,
    );
    this.selectOne = db.prepare<[string, string, string], DocumentRow>(
      `SELECT ${LISTED_COLUMNS} FROM ${LISTED_FROM} WHERE d.tenant = ? AND d.project_identifier = ? AND d.object_identifier = ?`,
    );
    this.selectSibling = db.prepare<[string, string | null, string], number>(
      'SELECT 1 FROM documents WHERE project_identifier = ? AND parent_identifier IS ? AND fold_case(name) = fold_case(?)',
    ).pluck();
    this.selectSiblingExact = db.prepare<[string, string | null, string], number>('SELECT 1 FROM documents WHERE project_identifier = ? AND parent_identifier IS ? AND name = ?').pluck();
    this.selectPending = db.prepare<[], DocumentRow>('SELECT * FROM documents WHERE processing_pending = 1 ORDER BY seq');
    this.selectGlance = db.prepare<[string, string], { name: string; parent_identifier: string | null; is_directory: number }>(
      'SELECT name, parent_identifier, is_directory FROM documents WHERE object_identifier = ? AND project_identifier = ?',
    );
    this.countFiles = db.prepare<[string], number>('SELECT count(*) FROM documents WHERE project_identifier = ? AND is_directory = 0').pluck();
    this.selectOfProject = db.prepare<[string], string | null>('SELECT blob_key FROM documents WHERE project_identifier = ?').pluck();
    this.deleteOfProject = db.prepare('DELETE FROM documents WHERE project_identifier = ?');
    this.deleteOne = db.prepare('DELETE FROM documents WHERE object_identifier = ? AND is_directory = 0 RETURNING blob_key');
    this.updateOutcome = db.prepare(
      `UPDATE documents SET processing_pending = 0, upload_in_progress = 0, progress = 100,
         upload_successful = @uploadSuccessful, upload_failed_reason = @uploadFailedReason,
         indexing_not_possible = @indexingNotPossible, unsupported_file_type = @unsupportedFileType,
         file_type = @fileType, extension = @extension, content_type = @contentType, page_count = @pageCount,
         token_count = @tokenCount, ocr_credits_cost = @ocrCreditsCost, layout_credits_cost = @layoutCreditsCost
       WHERE object_identifier = @objectIdentifier`,
    );
    const ofUpload = 'FROM documents WHERE tenant = ? AND upload_identifier = ? AND is_directory = 0';
    this.selectUploadCounts = db.prepare<[string, string], { total: number; processing: number; completed: number; failed: number; bytes: number }>(
      `SELECT count(*) AS total, coalesce(sum(upload_in_progress = 1), 0) AS processing, coalesce(sum(upload_successful = 1), 0) AS completed,
              coalesce(sum(upload_failed_reason IS NOT NULL), 0) AS failed, coalesce(sum(size), 0) AS bytes ${ofUpload}`,
    );
    this.selectUploadReasons = db.prepare<[string, string], { key: string; count: number }>(
      `SELECT upload_failed_reason AS key, count(*) AS count ${ofUpload} AND upload_failed_reason IS NOT NULL GROUP BY upload_failed_reason`,
    );
    this.selectUploadFileTypes = db.prepare<[string, string], { key: string; count: number }>(
      `SELECT file_type AS key, count(*) AS count ${ofUpload} GROUP BY file_type`,
    );
  }

  add(document: DocumentRecord): void {
    this.insert.run(toRow(document));
  }

  find(tenant: string, projectIdentifier: string, objectIdentifier: string): ListedDocument | undefined {
    const row = this.selectOne.get(tenant, projectIdentifier, objectIdentifier);
    return row && toListed(row);
  }

  /**
   * Whether the project holds the document: its name, its folder and whether it is one. A look by
   * key alone, for checks made on every upload (find also reads its parent and asks for children).
   */
  glance(projectIdentifier: string, objectIdentifier: string): { name: string; parent: string | null; isDirectory: boolean } | undefined {
    const row = this.selectGlance.get(objectIdentifier, projectIdentifier);
    return row && { name: row.name, parent: row.parent_identifier, isDirectory: row.is_directory === 1 };
  }

  nameTaken(projectIdentifier: string, parentIdentifier: string | null, name: string, caseSensitive = false): boolean {
    return (caseSensitive ? this.selectSiblingExact : this.selectSibling).get(projectIdentifier, parentIdentifier, name) === 1;
  }

  pending(): DocumentRecord[] {
    return this.selectPending.all().map(toRecord);
  }

  complete(objectIdentifier: string, outcome: ProcessingOutcome): void {
    this.updateOutcome.run({
      objectIdentifier,
      ...outcome,
      uploadSuccessful: outcome.uploadSuccessful ? 1 : 0,
      indexingNotPossible: outcome.indexingNotPossible ? 1 : 0,
      unsupportedFileType: outcome.unsupportedFileType ? 1 : 0,
    });
  }

  /**
   * Folder id -> {name, parent} for building `path`s, read as asked and remembered: a page needs
   * the ancestors of its own documents only. (Reading every folder of the project for each page
   * made a listing of a million documents in 10,100 folders cost 0.68 s a page.)
   */
  folderLookup(projectIdentifier: string): (id: string) => { name: string; parent: string | null } | undefined {
    const known = new Map<string, { name: string; parent: string | null } | undefined>();
    return (id) => {
      if (known.has(id)) return known.get(id);
      const row = this.glance(projectIdentifier, id);
      const folder = row?.isDirectory ? { name: row.name, parent: row.parent } : undefined;
      known.set(id, folder);
      return folder;
    };
  }

  fileCount(projectIdentifier: string): number {
    return this.countFiles.get(projectIdentifier) ?? 0;
  }

  /** Removes every document of a project; returns the blob keys to delete. */
  removeProject(projectIdentifier: string): string[] {
    const keys = this.selectOfProject.all(projectIdentifier).filter((key): key is string => key !== null);
    this.deleteOfProject.run(projectIdentifier);
    return keys;
  }

  /**
   * Removes one document (what a user does in the service's own interface; the API shows no
   * document delete). Returns whether it existed and the blob key to delete.
   */
  removeOne(objectIdentifier: string): { removed: boolean; blobKey: string | null } {
    const row = this.deleteOne.get(objectIdentifier) as { blob_key: string | null } | undefined;
    return { removed: row !== undefined, blobKey: row?.blob_key ?? null };
  }

  list(query: DocumentQuery): { items: ListedDocument[]; totalCount: number } {
    // Late lists (a listing lag): a document shows once its delay has passed; what a listing holds
    // then changes with time alone, so no walk is remembered between its pages.
    const late = listedCondition(this.db, 'd.object_identifier', 'd.date_added');
    const conditions = ['d.tenant = @tenant', 'd.project_identifier = @projectIdentifier', ...late];
    const params: Record<string, unknown> = { tenant: query.tenant, projectIdentifier: query.projectIdentifier };
    let prefix = '';
    if (!query.flatten) {
      conditions.push('d.parent_identifier IS @parentIdentifier');
      params.parentIdentifier = query.parentIdentifier;
    } else if (query.parentIdentifier) {
      prefix = DESCENDANTS;
      conditions.push('d.object_identifier IN (SELECT id FROM descendants)');
      params.parentIdentifier = query.parentIdentifier;
    }
    if (query.searchText) {
      conditions.push('search_match(d.name, @searchText)');
      params.searchText = query.searchText;
    }
    if (query.indexingStatus) conditions.push(INDEXING_STATUS_CONDITIONS[query.indexingStatus] as string);
    if (query.uploadIdentifier) {
      conditions.push('d.upload_identifier = @uploadIdentifier');
      params.uploadIdentifier = query.uploadIdentifier;
    }
    if (query.filter) {
      conditions.push(filterClause(query.filter));
      params.filterTerm = query.filter.term;
    }
    const where = conditions.join(' AND ');
    const direction = query.desc ? 'DESC' : 'ASC';
    // A listing read page after page with nothing written meanwhile (a client walking a project)
    // costs the same at page 1 and page 10,000: its count is taken once, and each page in the
    // date order goes on from where the one before it ended instead of passing over every row
    // before it (OFFSET). Any write starts it over; other orders and jumps use OFFSET.
    const walk = this.walks.of(`${prefix}|${where}|${query.sortExpression}|${direction}|${query.limit}|${JSON.stringify(params)}`, late.length ? Number.NaN : (this.changes.get() as number));
    walk.count ??= this.lists.get(`${prefix} SELECT count(*) FROM documents d WHERE ${where}`).pluck().get(params) as number;
    const totalCount = walk.count;
    const after = query.sortExpression === 'd.date_added' && query.offset > 0 ? walk.ends.get(query.offset) : undefined;
    const page = after
      ? `SELECT d.seq FROM documents d WHERE ${where} AND (d.date_added, d.seq) ${query.desc ? '<' : '>'} (@afterDate, @afterSeq) ORDER BY d.date_added ${direction}, d.seq ${direction} LIMIT @limit`
      : `SELECT d.seq FROM documents d WHERE ${where} ORDER BY ${query.sortExpression} ${direction}, d.seq ${direction} LIMIT @limit OFFSET @offset`;
    const rows = this.lists
      .get(
        // The page is chosen on the documents alone (by an index when the order has one), then
        // joined: rows before the page are never built.
        `${prefix} SELECT ${LISTED_COLUMNS} FROM ${LISTED_FROM} WHERE d.seq IN (${page})
         ORDER BY ${query.sortExpression} ${direction}, d.seq ${direction}`,
      )
      .all({ ...params, limit: query.limit, ...(after ? { afterDate: after.date, afterSeq: after.seq } : { offset: query.offset }) }) as DocumentRow[];
    const last = rows[rows.length - 1];
    if (last) walk.ends.set(query.offset + rows.length, { date: last.date_added, seq: last.seq });
    return { items: rows.map(toListed), totalCount };
  }

  uploadStats(tenant: string, uploadIdentifier: string): UploadStats {
    const counts = this.selectUploadCounts.get(tenant, uploadIdentifier);
    const failedReasonSummary = Object.fromEntries(UPLOAD_FAILED_REASONS.map((reason) => [reason, 0]));
    for (const { key, count } of this.selectUploadReasons.all(tenant, uploadIdentifier)) failedReasonSummary[key] = count;
    const fileTypeSummary = Object.fromEntries(this.selectUploadFileTypes.all(tenant, uploadIdentifier).map(({ key, count }) => [key, count]));
    return {
      totalDocumentCount: counts?.total ?? 0,
      processingDocumentCount: counts?.processing ?? 0,
      completedDocumentCount: counts?.completed ?? 0,
      failedDocumentCount: counts?.failed ?? 0,
      totalSizeBytes: counts?.bytes ?? 0,
      failedReasonSummary,
      fileTypeSummary,
    };
  }
}

const flag = (value: boolean | null): number | null => (value === null ? null : value ? 1 : 0);
const unflag = (value: number | null): boolean | null => (value === null ? null : value === 1);

function toRow(d: DocumentRecord): Omit<DocumentRow, 'parent_name' | 'has_children' | 'seq'> {
  return {
    object_identifier: d.objectIdentifier,
    tenant: d.tenant,
    project_identifier: d.projectIdentifier,
    parent_identifier: d.parentIdentifier,
    name: d.name,
    is_directory: d.isDirectory ? 1 : 0,
    upload_identifier: d.uploadIdentifier,
    content_type: d.contentType,
    size: d.size,
    date_added: d.dateAdded,
    upload_successful: flag(d.uploadSuccessful),
    upload_in_progress: d.uploadInProgress ? 1 : 0,
    upload_failed_reason: d.uploadFailedReason,
    indexing_not_possible: flag(d.indexingNotPossible),
    unsupported_file_type: flag(d.unsupportedFileType),
    file_type: d.fileType,
    extension: d.extension,
    progress: d.progress,
    token_count: d.tokenCount,
    page_count: d.pageCount,
    ocr_credits_cost: d.ocrCreditsCost,
    layout_credits_cost: d.layoutCreditsCost,
    ocr_strategy: d.ocrStrategy,
    ocr_engine: d.ocrEngine,
    coordinate_extraction_strategy: d.coordinateExtractionStrategy,
    source: d.source,
    metadata: d.metadata && JSON.stringify(d.metadata),
    owner_id: d.owner.id,
    owner_name: d.owner.name,
    owner_email: d.owner.email,
    blob_key: d.blobKey,
    processing_pending: d.processingPending ? 1 : 0,
  };
}

function toRecord(r: DocumentRow): DocumentRecord {
  return {
    objectIdentifier: r.object_identifier,
    tenant: r.tenant,
    projectIdentifier: r.project_identifier,
    parentIdentifier: r.parent_identifier,
    name: r.name,
    isDirectory: r.is_directory === 1,
    uploadIdentifier: r.upload_identifier,
    contentType: r.content_type,
    size: r.size,
    dateAdded: r.date_added,
    uploadSuccessful: unflag(r.upload_successful),
    uploadInProgress: r.upload_in_progress === 1,
    uploadFailedReason: r.upload_failed_reason,
    indexingNotPossible: unflag(r.indexing_not_possible),
    unsupportedFileType: unflag(r.unsupported_file_type),
    fileType: r.file_type,
    extension: r.extension,
    progress: r.progress,
    tokenCount: r.token_count,
    pageCount: r.page_count,
    ocrCreditsCost: r.ocr_credits_cost,
    layoutCreditsCost: r.layout_credits_cost,
    ocrStrategy: r.ocr_strategy,
    ocrEngine: r.ocr_engine,
    coordinateExtractionStrategy: r.coordinate_extraction_strategy,
    source: r.source,
    metadata: r.metadata === null ? null : (JSON.parse(r.metadata) as DocumentMetadataEntry[]),
    owner: { id: r.owner_id, name: r.owner_name, email: r.owner_email },
    blobKey: r.blob_key,
    processingPending: r.processing_pending === 1,
  };
}

function toListed(r: DocumentRow): ListedDocument {
  return { ...toRecord(r), parentName: r.parent_name ?? null, hasChildren: r.has_children === 1 };
}
