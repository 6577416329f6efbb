// Items that hang off the references of an assembly's rich-text tree: template columns (per
// reference uuid) and category conditions (per condition uuid). One generic store, two tables.
import type Database from 'better-sqlite3';
import { applyMigrations } from './database.js';

export interface TemplateColumnRecord {
  objectIdentifier: string;
  name: string;
  template: unknown;
}

export interface CategoryConditionRecord {
  objectIdentifier: string;
  fuzzyMatch: boolean;
  text: string | null;
}

function migrations(table: string): string[] {
  return [
    `CREATE TABLE ${table} (
       object_identifier TEXT PRIMARY KEY, assembly_identifier TEXT NOT NULL REFERENCES assemblies(object_identifier) ON DELETE CASCADE,
       anchor_identifier TEXT NOT NULL, seq INTEGER NOT NULL, item TEXT NOT NULL);
     CREATE INDEX ${table}_by_anchor ON ${table} (assembly_identifier, anchor_identifier, seq);`,
  ];
}

/** Items of one assembly, grouped by an anchor uuid (a reference or a condition of its tree). */
export class AssemblyReferenceItemStore<T extends { objectIdentifier: string }> {
  private readonly insert;
  private readonly selectPage;
  private readonly count;
  private readonly selectOne;
  private readonly updateOne;
  private readonly deleteOne;

  constructor(db: Database.Database, table: 'template_columns' | 'category_conditions') {
    applyMigrations(db, table, migrations(table));
    const anchor = 'assembly_identifier = ? AND anchor_identifier = ?';
    this.insert = db.prepare(
      `INSERT INTO ${table} (object_identifier, assembly_identifier, anchor_identifier, seq, item)
       VALUES (?, ?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM ${table}), ?)`,
    );
    this.selectPage = db.prepare<[string, string, number, number], string>(`SELECT item FROM ${table} WHERE ${anchor} ORDER BY seq LIMIT ? OFFSET ?`).pluck();
    this.count = db.prepare<[string, string], number>(`SELECT count(*) FROM ${table} WHERE ${anchor}`).pluck();
    this.selectOne = db.prepare<[string, string, string], string>(`SELECT item FROM ${table} WHERE ${anchor} AND object_identifier = ?`).pluck();
    this.updateOne = db.prepare(`UPDATE ${table} SET item = ? WHERE ${anchor} AND object_identifier = ?`);
    this.deleteOne = db.prepare(`DELETE FROM ${table} WHERE ${anchor} AND object_identifier = ?`);
  }

  add(assemblyIdentifier: string, anchorIdentifier: string, item: T): void {
    this.insert.run(item.objectIdentifier, assemblyIdentifier, anchorIdentifier, JSON.stringify(item));
  }

  /** In creation order. */
  page(assemblyIdentifier: string, anchorIdentifier: string, limit: number, offset: number): { items: T[]; totalCount: number } {
    const items = this.selectPage.all(assemblyIdentifier, anchorIdentifier, limit, offset).map((json) => JSON.parse(json) as T);
    return { items, totalCount: this.count.get(assemblyIdentifier, anchorIdentifier) as number };
  }

  find(assemblyIdentifier: string, anchorIdentifier: string, objectIdentifier: string): T | undefined {
    const json = this.selectOne.get(assemblyIdentifier, anchorIdentifier, objectIdentifier);
    return json === undefined ? undefined : (JSON.parse(json) as T);
  }

  update(assemblyIdentifier: string, anchorIdentifier: string, item: T): void {
    this.updateOne.run(JSON.stringify(item), assemblyIdentifier, anchorIdentifier, item.objectIdentifier);
  }

  remove(assemblyIdentifier: string, anchorIdentifier: string, objectIdentifier: string): boolean {
    return this.deleteOne.run(assemblyIdentifier, anchorIdentifier, objectIdentifier).changes > 0;
  }
}
