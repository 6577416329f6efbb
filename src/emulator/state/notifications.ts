// Per-user notifications.
import type Database from 'better-sqlite3';
import { applyMigrations } from './database.js';

export interface NotificationRecord {
  objectIdentifier: string;
  tenant: string;
  userId: string;
  dateAdded: string;
  isRead: boolean;
  title: string;
  message: string;
  type: string;
  resourceIdentifiers: Record<string, string>;
}

interface NotificationRow {
  object_identifier: string;
  tenant: string;
  user_id: string;
  date_added: string;
  is_read: number;
  title: string;
  message: string;
  type: string;
  resource_identifiers: string;
}

const MIGRATIONS = [
  `CREATE TABLE notifications (
     object_identifier TEXT PRIMARY KEY, tenant TEXT NOT NULL, user_id TEXT NOT NULL, seq INTEGER NOT NULL,
     date_added TEXT NOT NULL, is_read INTEGER NOT NULL, title TEXT NOT NULL, message TEXT NOT NULL, type TEXT NOT NULL,
     resource_identifiers TEXT NOT NULL);
   CREATE INDEX notifications_by_user ON notifications (tenant, user_id, seq);
   CREATE UNIQUE INDEX notifications_by_seq ON notifications (seq);`,
];

export class NotificationStore {
  private readonly insert;
  private readonly selectPage;
  private readonly updateRead;
  private readonly deleteOne;

  constructor(db: Database.Database) {
    applyMigrations(db, 'notifications', MIGRATIONS);
    this.insert = db.prepare(
      `INSERT INTO notifications VALUES (@objectIdentifier, @tenant, @userId, (SELECT coalesce(max(seq), 0) + 1 FROM notifications),
         @dateAdded, @isRead, @title, @message, @type, @resourceIdentifiers)`,
    );
    this.selectPage = db.prepare<[string, string, number, number], NotificationRow>(
      'SELECT * FROM notifications WHERE tenant = ? AND user_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?',
    );
    this.updateRead = db.prepare('UPDATE notifications SET is_read = ? WHERE tenant = ? AND user_id = ? AND object_identifier = ?');
    this.deleteOne = db.prepare('DELETE FROM notifications WHERE tenant = ? AND user_id = ? AND object_identifier = ?');
  }

  add(n: NotificationRecord): void {
    this.insert.run({ ...n, isRead: n.isRead ? 1 : 0, resourceIdentifiers: JSON.stringify(n.resourceIdentifiers) });
  }

  /** Newest first. */
  page(tenant: string, userId: string, limit: number, offset: number): NotificationRecord[] {
    return this.selectPage.all(tenant, userId, limit, offset).map((r) => ({
      objectIdentifier: r.object_identifier,
      tenant: r.tenant,
      userId: r.user_id,
      dateAdded: r.date_added,
      isRead: r.is_read === 1,
      title: r.title,
      message: r.message,
      type: r.type,
      resourceIdentifiers: JSON.parse(r.resource_identifiers) as Record<string, string>,
    }));
  }

  /** False when the user has no such notification. */
  markRead(tenant: string, userId: string, objectIdentifier: string, isRead: boolean): boolean {
    return this.updateRead.run(isRead ? 1 : 0, tenant, userId, objectIdentifier).changes > 0;
  }

  remove(tenant: string, userId: string, objectIdentifier: string): boolean {
    return this.deleteOne.run(tenant, userId, objectIdentifier).changes > 0;
  }
}
