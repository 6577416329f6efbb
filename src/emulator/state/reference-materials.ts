// Reference materials of playbooks.
import type Database from 'better-sqlite3';
import { applyMigrations } from './database.js';

/** The writable fields (create body without `type` and `categories`, i.e. the update body). */
export interface ReferenceMaterialFields {
  name: string;
  description: string | null;
  booleanValue: boolean | null;
  isSourceDocuments: boolean | null;
  dateTimeValue: string | null;
  decimalValue: number | null;
  textValue: string | null;
  isLocked: boolean;
  isRequired: boolean;
}

export interface ReferenceMaterialRecord extends ReferenceMaterialFields {
  objectIdentifier: string;
  stableObjectIdentifier: string;
  type: string;
  dateAdded: string;
  categories: { objectIdentifier: string; name: string; dateAdded: string }[];
}

const MIGRATIONS = [
  `CREATE TABLE reference_materials (
     object_identifier TEXT PRIMARY KEY, playbook_identifier TEXT NOT NULL REFERENCES playbooks(object_identifier) ON DELETE CASCADE,
     seq INTEGER NOT NULL, material TEXT NOT NULL);
   CREATE INDEX reference_materials_by_playbook ON reference_materials (playbook_identifier, seq);`,
];

export class ReferenceMaterialStore {
  private readonly insert;
  private readonly selectAll;
  private readonly selectOne;
  private readonly updateOne;
  private readonly deleteOne;

  constructor(db: Database.Database) {
    applyMigrations(db, 'reference-materials', MIGRATIONS);
    this.insert = db.prepare(
      `INSERT INTO reference_materials (object_identifier, playbook_identifier, seq, material)
       VALUES (?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM reference_materials), ?)`,
    );
    this.selectAll = db.prepare<[string], string>('SELECT material FROM reference_materials WHERE playbook_identifier = ? ORDER BY seq').pluck();
    this.selectOne = db
      .prepare<[string, string], string>('SELECT material FROM reference_materials WHERE playbook_identifier = ? AND object_identifier = ?')
      .pluck();
    this.updateOne = db.prepare('UPDATE reference_materials SET material = ? WHERE playbook_identifier = ? AND object_identifier = ?');
    this.deleteOne = db.prepare('DELETE FROM reference_materials WHERE playbook_identifier = ? AND object_identifier = ?');
  }

  add(playbookIdentifier: string, material: ReferenceMaterialRecord): void {
    this.insert.run(material.objectIdentifier, playbookIdentifier, JSON.stringify(material));
  }

  /** In creation order. */
  all(playbookIdentifier: string): ReferenceMaterialRecord[] {
    return this.selectAll.all(playbookIdentifier).map((json) => JSON.parse(json) as ReferenceMaterialRecord);
  }

  find(playbookIdentifier: string, objectIdentifier: string): ReferenceMaterialRecord | undefined {
    const json = this.selectOne.get(playbookIdentifier, objectIdentifier);
    return json === undefined ? undefined : (JSON.parse(json) as ReferenceMaterialRecord);
  }

  update(playbookIdentifier: string, material: ReferenceMaterialRecord): void {
    this.updateOne.run(JSON.stringify(material), playbookIdentifier, material.objectIdentifier);
  }

  remove(playbookIdentifier: string, objectIdentifier: string): void {
    this.deleteOne.run(playbookIdentifier, objectIdentifier);
  }
}
