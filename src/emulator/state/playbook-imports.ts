// Playbook import tasks. The API has no call that reads them (the outcome is told by a
// notification); they are stored so that unfinished imports resume after a restart.
import type Database from 'better-sqlite3';
import { applyMigrations } from './database.js';
import type { Owner } from './projects.js';

export type ImportStatus = 'queued' | 'running' | 'succeeded' | 'failed';

export interface ImportTaskRecord {
  taskIdentifier: string;
  tenant: string;
  status: ImportStatus;
  dateAdded: string;
  /** Who imported: the new playbook's owner. */
  owner: Owner;
  /** The uploaded zip, deleted once the task has ended. */
  blobKey: string;
}

interface ImportRow {
  task_identifier: string;
  tenant: string;
  status: ImportStatus;
  date_added: string;
  owner_id: string;
  owner_name: string;
  owner_email: string;
  blob_key: string;
}

const MIGRATIONS = [
  `CREATE TABLE playbook_imports (
     task_identifier TEXT PRIMARY KEY, tenant TEXT NOT NULL, seq INTEGER NOT NULL, status TEXT NOT NULL, date_added TEXT NOT NULL,
     owner_id TEXT NOT NULL, owner_name TEXT NOT NULL, owner_email TEXT NOT NULL, blob_key TEXT NOT NULL,
     playbook_identifier TEXT, failure TEXT);
   CREATE INDEX playbook_imports_unfinished ON playbook_imports (seq) WHERE status IN ('queued', 'running');`,
];

export class PlaybookImportStore {
  private readonly insert;
  private readonly updateStatus;
  private readonly updateOutcome;
  private readonly selectUnfinished;

  constructor(db: Database.Database) {
    applyMigrations(db, 'playbook-imports', MIGRATIONS);
    this.insert = db.prepare(
      `INSERT INTO playbook_imports (task_identifier, tenant, seq, status, date_added, owner_id, owner_name, owner_email, blob_key)
       VALUES (?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM playbook_imports), ?, ?, ?, ?, ?, ?)`,
    );
    this.updateStatus = db.prepare('UPDATE playbook_imports SET status = ? WHERE task_identifier = ?');
    this.updateOutcome = db.prepare('UPDATE playbook_imports SET status = ?, playbook_identifier = ?, failure = ? WHERE task_identifier = ?');
    this.selectUnfinished = db.prepare<[], ImportRow>("SELECT * FROM playbook_imports WHERE status IN ('queued', 'running') ORDER BY seq");
  }

  add(task: ImportTaskRecord): void {
    this.insert.run(task.taskIdentifier, task.tenant, task.status, task.dateAdded, task.owner.id, task.owner.name, task.owner.email, task.blobKey);
  }

  running(taskIdentifier: string): void {
    this.updateStatus.run('running', taskIdentifier);
  }

  succeeded(taskIdentifier: string, playbookIdentifier: string): void {
    this.updateOutcome.run('succeeded', playbookIdentifier, null, taskIdentifier);
  }

  failed(taskIdentifier: string, reason: string): void {
    this.updateOutcome.run('failed', null, reason, taskIdentifier);
  }

  /** Queued and interrupted tasks, oldest first. */
  unfinished(): ImportTaskRecord[] {
    return this.selectUnfinished.all().map((row) => ({
      taskIdentifier: row.task_identifier,
      tenant: row.tenant,
      status: row.status,
      dateAdded: row.date_added,
      owner: { id: row.owner_id, name: row.owner_name, email: row.owner_email },
      blobKey: row.blob_key,
    }));
  }
}
