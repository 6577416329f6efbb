// Small key/value facts about this emulator instance (signing keys, the seed's
// description), kept in SQLite so they survive a restart with dataDir.
import type Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { applyMigrations } from './database.js';

export class MetaStore {
  private readonly select;
  private readonly upsert;

  constructor(db: Database.Database) {
    applyMigrations(db, 'meta', ['CREATE TABLE emulator_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)']);
    this.select = db.prepare<[string], string>('SELECT value FROM emulator_meta WHERE key = ?').pluck();
    this.upsert = db.prepare('INSERT INTO emulator_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  }

  get(key: string): string | undefined {
    return this.select.get(key);
  }

  set(key: string, value: string): void {
    this.upsert.run(key, value);
  }

  /** A random secret created once per database (tokens and signed URLs stay valid across restarts). */
  secret(key: string): Buffer {
    const existing = this.get(key);
    if (existing) return Buffer.from(existing, 'base64');
    const created = randomBytes(32);
    this.set(key, created.toString('base64'));
    return created;
  }
}
