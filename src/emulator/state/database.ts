// Opens the emulator's SQLite database: in memory by default, or a file under
// dataDir so that state survives a restart.
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

export function openDatabase(dataDir?: string): Database.Database {
  if (!dataDir) return configure(new Database(':memory:'));
  mkdirSync(dataDir, { recursive: true });
  const db = configure(new Database(join(dataDir, 'state.sqlite')));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  return db;
}

function configure(db: Database.Database): Database.Database {
  db.pragma('foreign_keys = ON');
  // SQLite's lower() folds ASCII only; names are compared case-insensitively in any script.
  db.function('fold_case', { deterministic: true }, (value: unknown) =>
    typeof value === 'string' ? value.toLocaleLowerCase('en-US') : value,
  );
  return db;
}

/**
 * Applies each not-yet-applied step of one part's schema, in order, in a transaction.
 * Steps are append-only: never edit a released step, add a new one.
 */
export function applyMigrations(db: Database.Database, part: string, steps: readonly string[]): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (part TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (part, version))');
  const applied = db.prepare('SELECT version FROM schema_migrations WHERE part = ?').pluck().all(part) as number[];
  const record = db.prepare('INSERT INTO schema_migrations (part, version) VALUES (?, ?)');
  db.transaction(() => {
    steps.forEach((sql, version) => {
      if (applied.includes(version)) return;
      db.exec(sql);
      record.run(part, version);
    });
  })();
}
