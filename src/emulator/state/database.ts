// Opens the emulator's SQLite database: in memory by default, or a file under
// dataDir so that state survives a restart.
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { EmulatorModes } from '../context.js';

type SearchModes = Pick<EmulatorModes, 'search' | 'searchCase'>;

export function openDatabase(dataDir?: string, modes: SearchModes = { search: 'substring', searchCase: 'insensitive' }): Database.Database {
  if (!dataDir) return configure(new Database(':memory:'), modes);
  mkdirSync(dataDir, { recursive: true });
  const db = configure(new Database(join(dataDir, 'state.sqlite')), modes);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  return db;
}

function configure(db: Database.Database, modes: SearchModes): Database.Database {
  db.pragma('foreign_keys = ON');
  // SQLite's lower() folds ASCII only; names are compared case-insensitively in any script.
  const fold = (value: string) => value.toLocaleLowerCase('en-US');
  db.function('fold_case', { deterministic: true }, (value: unknown) => (typeof value === 'string' ? fold(value) : value));
  // `searchText` as the mode says (docs/emulator.md, Modes): 1 when `needle` matches `text`.
  db.function('search_match', { deterministic: true }, (text: unknown, needle: unknown) => {
    if (typeof text !== 'string' || typeof needle !== 'string') return 0;
    return searchMatches(text, needle, modes) ? 1 : 0;
  });
  return db;
}

const WORD = /[\p{L}\p{N}]+/gu;

/** Whether `needle` finds `text`: anywhere, at its start, or as whole words (each of the needle's words a word of the text). */
export function searchMatches(text: string, needle: string, modes: SearchModes): boolean {
  const t = modes.searchCase === 'insensitive' ? text.toLocaleLowerCase('en-US') : text;
  const n = modes.searchCase === 'insensitive' ? needle.toLocaleLowerCase('en-US') : needle;
  if (modes.search === 'prefix') return t.startsWith(n);
  if (modes.search === 'word') {
    const words = new Set(t.match(WORD) ?? []);
    const wanted = n.match(WORD) ?? [];
    return wanted.length > 0 && wanted.every((w) => words.has(w));
  }
  return t.includes(n);
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
