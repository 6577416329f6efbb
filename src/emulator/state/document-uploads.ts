// Playbook document uploads: named batches that documents join through their documentUploadIdentifier.
import type Database from 'better-sqlite3';
import { applyMigrations } from './database.js';
import { StatementCache } from './list-query.js';
import { listedCondition } from './listing-lag.js';

export interface DocumentUploadRecord {
  objectIdentifier: string;
  tenant: string;
  playbookIdentifier: string;
  name: string;
  fileCount: number | null;
  dateAdded: string;
  /** PATCH …/complete was called. */
  completeRequested: boolean;
  /** Set once complete was requested and no document of the batch is processing any more. */
  dateCompleted: string | null;
}

interface UploadRow {
  object_identifier: string;
  tenant: string;
  playbook_identifier: string;
  name: string;
  file_count: number | null;
  date_added: string;
  complete_requested: number;
  date_completed: string | null;
}

export interface UploadQuery {
  searchText?: string;
  sortByName: boolean;
  desc: boolean;
  limit: number;
  offset: number;
}

const MIGRATIONS = [
  `CREATE TABLE playbook_document_uploads (
     object_identifier TEXT PRIMARY KEY, tenant TEXT NOT NULL,
     playbook_identifier TEXT NOT NULL REFERENCES playbooks(object_identifier) ON DELETE CASCADE,
     seq INTEGER NOT NULL, name TEXT NOT NULL, file_count INTEGER, date_added TEXT NOT NULL,
     complete_requested INTEGER NOT NULL, date_completed TEXT);
   CREATE INDEX playbook_document_uploads_by_playbook ON playbook_document_uploads (playbook_identifier, seq);
   CREATE INDEX playbook_document_uploads_awaiting ON playbook_document_uploads (tenant, object_identifier) WHERE complete_requested = 1 AND date_completed IS NULL;`,
];

export class DocumentUploadStore {
  private readonly insert;
  private readonly selectOne;
  private readonly selectAwaiting;
  private readonly requestComplete;
  private readonly markCompleted;
  private readonly deleteOne;
  private readonly lists: StatementCache;

  constructor(private readonly db: Database.Database) {
    applyMigrations(db, 'playbook-document-uploads', MIGRATIONS);
    this.insert = db.prepare(
      `INSERT INTO playbook_document_uploads (object_identifier, tenant, playbook_identifier, seq, name, file_count, date_added, complete_requested, date_completed)
       VALUES (?, ?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM playbook_document_uploads), ?, ?, ?, 0, NULL)`,
    );
    this.selectOne = db.prepare<[string, string], UploadRow>('SELECT * FROM playbook_document_uploads WHERE playbook_identifier = ? AND object_identifier = ?');
    this.selectAwaiting = db.prepare<[string, string], UploadRow>(
      'SELECT * FROM playbook_document_uploads WHERE tenant = ? AND object_identifier = ? AND complete_requested = 1 AND date_completed IS NULL',
    );
    this.requestComplete = db.prepare('UPDATE playbook_document_uploads SET complete_requested = 1 WHERE object_identifier = ?');
    this.markCompleted = db.prepare('UPDATE playbook_document_uploads SET date_completed = ? WHERE object_identifier = ? AND date_completed IS NULL');
    this.deleteOne = db.prepare('DELETE FROM playbook_document_uploads WHERE playbook_identifier = ? AND object_identifier = ?');
    this.lists = new StatementCache(db);
  }

  add(upload: DocumentUploadRecord): void {
    this.insert.run(upload.objectIdentifier, upload.tenant, upload.playbookIdentifier, upload.name, upload.fileCount, upload.dateAdded);
  }

  find(playbookIdentifier: string, objectIdentifier: string): DocumentUploadRecord | undefined {
    const row = this.selectOne.get(playbookIdentifier, objectIdentifier);
    return row && toUpload(row);
  }

  /** The upload if complete was requested and it has not completed yet (whatever its playbook). */
  awaitingCompletion(tenant: string, objectIdentifier: string): DocumentUploadRecord | undefined {
    const row = this.selectAwaiting.get(tenant, objectIdentifier);
    return row && toUpload(row);
  }

  list(playbookIdentifier: string, query: UploadQuery): DocumentUploadRecord[] {
    const direction = query.desc ? 'DESC' : 'ASC';
    const sql = `SELECT * FROM playbook_document_uploads WHERE playbook_identifier = @playbook
                 AND (@searchText IS NULL OR search_match(name, @searchText))
                 ${listedCondition(this.db, 'object_identifier', 'date_added').map((c) => `AND ${c}`).join(' ')}
                 ORDER BY ${query.sortByName ? 'fold_case(name)' : 'date_added'} ${direction}, seq ${direction} LIMIT @limit OFFSET @offset`;
    const rows = this.lists.get(sql).all({ playbook: playbookIdentifier, searchText: query.searchText || null, limit: query.limit, offset: query.offset });
    return (rows as UploadRow[]).map(toUpload);
  }

  requestCompletion(objectIdentifier: string): void {
    this.requestComplete.run(objectIdentifier);
  }

  /** False when it had completed already (so the completion is reported once). */
  complete(objectIdentifier: string, dateCompleted: string): boolean {
    return this.markCompleted.run(dateCompleted, objectIdentifier).changes > 0;
  }

  remove(playbookIdentifier: string, objectIdentifier: string): void {
    this.deleteOne.run(playbookIdentifier, objectIdentifier);
  }
}

function toUpload(row: UploadRow): DocumentUploadRecord {
  return {
    objectIdentifier: row.object_identifier,
    tenant: row.tenant,
    playbookIdentifier: row.playbook_identifier,
    name: row.name,
    fileCount: row.file_count,
    dateAdded: row.date_added,
    completeRequested: row.complete_requested === 1,
    dateCompleted: row.date_completed,
  };
}
