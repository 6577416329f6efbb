// The metadata values of playbooks (one per organization metadata definition and playbook).
import type Database from 'better-sqlite3';
import type { StoredMetadataValue } from '../service/metadata-values.js';
import { applyMigrations } from './database.js';

/** Also read by the playbook search (metadata filters). */
export const PLAYBOOK_METADATA_TABLE = 'playbook_metadata_values';

const MIGRATIONS = [
  `CREATE TABLE ${PLAYBOOK_METADATA_TABLE} (
     object_identifier TEXT PRIMARY KEY, playbook_identifier TEXT NOT NULL REFERENCES playbooks(object_identifier) ON DELETE CASCADE,
     seq INTEGER NOT NULL, definition_identifier TEXT NOT NULL, value TEXT NOT NULL);
   CREATE INDEX playbook_metadata_by_playbook ON ${PLAYBOOK_METADATA_TABLE} (playbook_identifier, seq);
   CREATE UNIQUE INDEX playbook_metadata_one_per_definition ON ${PLAYBOOK_METADATA_TABLE} (playbook_identifier, definition_identifier);`,
];

export class PlaybookMetadataStore {
  private readonly insert;
  private readonly selectAll;
  private readonly selectOne;
  private readonly updateOne;
  private readonly deleteOne;

  constructor(db: Database.Database) {
    applyMigrations(db, 'playbook-metadata', MIGRATIONS);
    this.insert = db.prepare(
      `INSERT INTO ${PLAYBOOK_METADATA_TABLE} (object_identifier, playbook_identifier, seq, definition_identifier, value)
       VALUES (?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM ${PLAYBOOK_METADATA_TABLE}), ?, ?)`,
    );
    this.selectAll = db.prepare<[string], string>(`SELECT value FROM ${PLAYBOOK_METADATA_TABLE} WHERE playbook_identifier = ? ORDER BY seq`).pluck();
    this.selectOne = db
      .prepare<[string, string], string>(`SELECT value FROM ${PLAYBOOK_METADATA_TABLE} WHERE playbook_identifier = ? AND object_identifier = ?`)
      .pluck();
    this.updateOne = db.prepare(`UPDATE ${PLAYBOOK_METADATA_TABLE} SET definition_identifier = ?, value = ? WHERE playbook_identifier = ? AND object_identifier = ?`);
    this.deleteOne = db.prepare(`DELETE FROM ${PLAYBOOK_METADATA_TABLE} WHERE playbook_identifier = ? AND object_identifier = ?`);
  }

  add(playbookIdentifier: string, value: StoredMetadataValue): void {
    this.insert.run(value.objectIdentifier, playbookIdentifier, value.organizationMetadataIdentifier, JSON.stringify(value));
  }

  /** In creation order. */
  all(playbookIdentifier: string): StoredMetadataValue[] {
    return this.selectAll.all(playbookIdentifier).map((json) => JSON.parse(json) as StoredMetadataValue);
  }

  find(playbookIdentifier: string, objectIdentifier: string): StoredMetadataValue | undefined {
    const json = this.selectOne.get(playbookIdentifier, objectIdentifier);
    return json === undefined ? undefined : (JSON.parse(json) as StoredMetadataValue);
  }

  update(playbookIdentifier: string, value: StoredMetadataValue): void {
    this.updateOne.run(value.organizationMetadataIdentifier, JSON.stringify(value), playbookIdentifier, value.objectIdentifier);
  }

  remove(playbookIdentifier: string, objectIdentifier: string): boolean {
    return this.deleteOne.run(playbookIdentifier, objectIdentifier).changes > 0;
  }
}
