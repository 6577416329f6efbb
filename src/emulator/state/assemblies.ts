// Assemblies (document templates) of playbooks: their fields, stored file and rich-text tree.
import type Database from 'better-sqlite3';
import type { RichTextNode } from '../service/rich-text.js';
import { applyMigrations } from './database.js';
import type { Owner } from './projects.js';

export interface AssemblyFile {
  blobKey: string;
  fileName: string;
  size: number;
}

export interface AssemblyRecord {
  objectIdentifier: string;
  playbookIdentifier: string;
  name: string;
  description: string;
  assemblyType: string;
  playbookGroupIdentifier: string | null;
  dateAdded: string;
  dateModified: string;
  owner: Owner;
  file: AssemblyFile | null;
  richText: RichTextNode | null;
}

/** What a playbook shows about its assemblies. */
export interface AssemblySummary {
  groupCount: number;
  hasFile: boolean;
}

interface AssemblyRow {
  object_identifier: string;
  playbook_identifier: string;
  name: string;
  description: string;
  assembly_type: string;
  playbook_group_identifier: string | null;
  date_added: string;
  date_modified: string;
  owner_id: string;
  owner_name: string;
  owner_email: string;
  blob_key: string | null;
  file_name: string | null;
  size: number | null;
  rich_text: string | null;
}

const MIGRATIONS = [
  `CREATE TABLE assemblies (
     object_identifier TEXT PRIMARY KEY, playbook_identifier TEXT NOT NULL REFERENCES playbooks(object_identifier) ON DELETE CASCADE,
     seq INTEGER NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL, assembly_type TEXT NOT NULL, playbook_group_identifier TEXT,
     date_added TEXT NOT NULL, date_modified TEXT NOT NULL, owner_id TEXT NOT NULL, owner_name TEXT NOT NULL, owner_email TEXT NOT NULL,
     blob_key TEXT, file_name TEXT, size INTEGER, rich_text TEXT);
   CREATE INDEX assemblies_by_playbook ON assemblies (playbook_identifier, seq);`,
];

export class AssemblyStore {
  private readonly insert;
  private readonly selectOne;
  private readonly selectPage;
  private readonly count;
  private readonly updateFile;
  private readonly updateRichText;
  private readonly deleteOne;
  private readonly selectSummaries;

  constructor(db: Database.Database) {
    applyMigrations(db, 'assemblies', MIGRATIONS);
    this.insert = db.prepare(
      `INSERT INTO assemblies (object_identifier, playbook_identifier, seq, name, description, assembly_type, playbook_group_identifier,
         date_added, date_modified, owner_id, owner_name, owner_email, blob_key, file_name, size, rich_text)
       VALUES (@object_identifier, @playbook_identifier, (SELECT coalesce(max(seq), 0) + 1 FROM assemblies), @name, @description, @assembly_type,
         @playbook_group_identifier, @date_added, @date_modified, @owner_id, @owner_name, @owner_email, @blob_key, @file_name, @size, @rich_text)`,
    );
    this.selectOne = db.prepare<[string, string], AssemblyRow>('SELECT * FROM assemblies WHERE playbook_identifier = ? AND object_identifier = ?');
    const search = `playbook_identifier = @playbook AND (@searchText IS NULL OR search_match(name, @searchText))`;
    this.selectPage = db.prepare<{ playbook: string; searchText: string | null; limit: number; offset: number }, AssemblyRow>(
      `SELECT * FROM assemblies WHERE ${search} ORDER BY seq LIMIT @limit OFFSET @offset`,
    );
    this.count = db.prepare<{ playbook: string; searchText: string | null }, number>(`SELECT count(*) FROM assemblies WHERE ${search}`).pluck();
    this.updateFile = db.prepare(
      'UPDATE assemblies SET blob_key = ?, file_name = ?, size = ?, date_modified = ? WHERE playbook_identifier = ? AND object_identifier = ?',
    );
    this.updateRichText = db.prepare('UPDATE assemblies SET rich_text = ?, date_modified = ? WHERE playbook_identifier = ? AND object_identifier = ?');
    this.deleteOne = db.prepare('DELETE FROM assemblies WHERE playbook_identifier = ? AND object_identifier = ?');
    this.selectSummaries = db.prepare<[string], { playbook: string; groups: number; files: number }>(
      `SELECT playbook_identifier AS playbook, count(DISTINCT playbook_group_identifier) AS groups, count(blob_key) AS files
       FROM assemblies WHERE playbook_identifier IN (SELECT value FROM json_each(?)) GROUP BY playbook_identifier`,
    );
  }

  add(assembly: AssemblyRecord): void {
    this.insert.run({
      object_identifier: assembly.objectIdentifier,
      playbook_identifier: assembly.playbookIdentifier,
      name: assembly.name,
      description: assembly.description,
      assembly_type: assembly.assemblyType,
      playbook_group_identifier: assembly.playbookGroupIdentifier,
      date_added: assembly.dateAdded,
      date_modified: assembly.dateModified,
      owner_id: assembly.owner.id,
      owner_name: assembly.owner.name,
      owner_email: assembly.owner.email,
      blob_key: assembly.file?.blobKey ?? null,
      file_name: assembly.file?.fileName ?? null,
      size: assembly.file?.size ?? null,
      rich_text: assembly.richText ? JSON.stringify(assembly.richText) : null,
    });
  }

  find(playbookIdentifier: string, objectIdentifier: string): AssemblyRecord | undefined {
    const row = this.selectOne.get(playbookIdentifier, objectIdentifier);
    return row && toAssembly(row);
  }

  /** In creation order; `searchText` is a case-insensitive part of the name. */
  page(playbookIdentifier: string, searchText: string | undefined, limit: number, offset: number): { items: AssemblyRecord[]; totalCount: number } {
    const filter = { playbook: playbookIdentifier, searchText: searchText || null };
    return { items: this.selectPage.all({ ...filter, limit, offset }).map(toAssembly), totalCount: this.count.get(filter) as number };
  }

  setFile(assembly: AssemblyRecord, file: AssemblyFile, dateModified: string): void {
    this.updateFile.run(file.blobKey, file.fileName, file.size, dateModified, assembly.playbookIdentifier, assembly.objectIdentifier);
  }

  setRichText(assembly: AssemblyRecord, tree: RichTextNode, dateModified: string): void {
    this.updateRichText.run(JSON.stringify(tree), dateModified, assembly.playbookIdentifier, assembly.objectIdentifier);
  }

  /** Also deletes the assembly's template columns and category conditions (foreign keys). */
  remove(assembly: AssemblyRecord): void {
    this.deleteOne.run(assembly.playbookIdentifier, assembly.objectIdentifier);
  }

  /** Per playbook: distinct assembly groups and whether any assembly has a file. */
  summaries(playbookIdentifiers: string[]): Map<string, AssemblySummary> {
    const rows = this.selectSummaries.all(JSON.stringify(playbookIdentifiers));
    return new Map(rows.map((row) => [row.playbook, { groupCount: row.groups, hasFile: row.files > 0 }]));
  }
}

function toAssembly(row: AssemblyRow): AssemblyRecord {
  return {
    objectIdentifier: row.object_identifier,
    playbookIdentifier: row.playbook_identifier,
    name: row.name,
    description: row.description,
    assemblyType: row.assembly_type,
    playbookGroupIdentifier: row.playbook_group_identifier,
    dateAdded: row.date_added,
    dateModified: row.date_modified,
    owner: { id: row.owner_id, name: row.owner_name, email: row.owner_email },
    file: row.blob_key ? { blobKey: row.blob_key, fileName: row.file_name ?? '', size: row.size ?? 0 } : null,
    richText: row.rich_text ? (JSON.parse(row.rich_text) as RichTextNode) : null,
  };
}
