// Organization metadata definitions (seeded) and the options of the category ones.
import type Database from 'better-sqlite3';
import type { MetadataDefinition } from '../context.js';
import { applyMigrations } from './database.js';
import { StatementCache } from './list-query.js';

export const METADATA_DATA_TYPES = ['text', 'yesNo', 'decimal', 'date', 'singleCategory', 'multiCategory'] as const;
export const CATEGORY_DATA_TYPES: readonly string[] = ['singleCategory', 'multiCategory'];

export interface MetadataOption {
  objectIdentifier: string;
  name: string;
}

interface DefinitionRow {
  object_identifier: string;
  name: string;
  description: string | null;
  data_type: string;
  is_required: number;
}

const MIGRATIONS = [
  `CREATE TABLE organization_metadata (
     object_identifier TEXT PRIMARY KEY, tenant TEXT NOT NULL, name TEXT NOT NULL, description TEXT,
     data_type TEXT NOT NULL, is_required INTEGER NOT NULL, seq INTEGER NOT NULL);
   CREATE TABLE organization_metadata_options (
     object_identifier TEXT PRIMARY KEY, metadata_identifier TEXT NOT NULL REFERENCES organization_metadata(object_identifier),
     name TEXT NOT NULL, seq INTEGER NOT NULL);
   CREATE INDEX organization_metadata_options_by_definition ON organization_metadata_options (metadata_identifier, seq);
   CREATE UNIQUE INDEX organization_metadata_options_by_seq ON organization_metadata_options (seq);`,
];

export interface OptionQuery {
  searchText?: string;
  sortByName: boolean;
  desc: boolean;
  limit: number;
  offset: number;
}

export class OrganizationMetadataStore {
  private readonly insertDefinition;
  private readonly selectDefinition;
  private readonly selectDefinitions;
  private readonly insertOption;
  private readonly selectOptions;
  private readonly selectOption;
  private readonly renameOption;
  private readonly deleteOption;
  private readonly nextSeq;
  private readonly listQueries: StatementCache;

  constructor(db: Database.Database) {
    applyMigrations(db, 'organization-metadata', MIGRATIONS);
    this.listQueries = new StatementCache(db);
    this.insertDefinition = db.prepare(
      `INSERT INTO organization_metadata (object_identifier, tenant, name, description, data_type, is_required, seq)
       VALUES (?, ?, ?, ?, ?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM organization_metadata))`,
    );
    this.selectDefinition = db.prepare<[string, string], DefinitionRow>(
      'SELECT * FROM organization_metadata WHERE tenant = ? AND object_identifier = ?',
    );
    this.selectDefinitions = db.prepare<[string], DefinitionRow>('SELECT * FROM organization_metadata WHERE tenant = ? ORDER BY seq');
    this.nextSeq = db.prepare<[], number>('SELECT coalesce(max(seq), 0) + 1 FROM organization_metadata_options').pluck();
    this.insertOption = db.prepare('INSERT INTO organization_metadata_options (object_identifier, metadata_identifier, name, seq) VALUES (?, ?, ?, ?)');
    this.selectOptions = db.prepare<[string], MetadataOption>(
      'SELECT object_identifier AS objectIdentifier, name FROM organization_metadata_options WHERE metadata_identifier = ? ORDER BY seq',
    );
    this.selectOption = db.prepare<[string, string], MetadataOption>(
      `SELECT object_identifier AS objectIdentifier, name FROM organization_metadata_options
       WHERE metadata_identifier = ? AND object_identifier = ?`,
    );
    this.renameOption = db.prepare('UPDATE organization_metadata_options SET name = ? WHERE metadata_identifier = ? AND object_identifier = ?');
    this.deleteOption = db.prepare('DELETE FROM organization_metadata_options WHERE metadata_identifier = ? AND object_identifier = ?');
  }

  addDefinition(tenant: string, definition: MetadataDefinition): void {
    this.insertDefinition.run(
      definition.objectIdentifier,
      tenant,
      definition.name,
      definition.description,
      definition.dataType,
      definition.isRequired ? 1 : 0,
    );
    for (const option of definition.options) this.insertOption.run(option.objectIdentifier, definition.objectIdentifier, option.name, this.nextSeq.get());
  }

  definition(tenant: string, objectIdentifier: string): MetadataDefinition | undefined {
    const row = this.selectDefinition.get(tenant, objectIdentifier);
    return row && this.toDefinition(row);
  }

  definitions(tenant: string): MetadataDefinition[] {
    return this.selectDefinitions.all(tenant).map((row) => this.toDefinition(row));
  }

  listOptions(definitionId: string, query: OptionQuery): MetadataOption[] {
    const order = `${query.sortByName ? 'fold_case(name)' : 'seq'} ${query.desc ? 'DESC' : 'ASC'}, seq ${query.desc ? 'DESC' : 'ASC'}`;
    const search = query.searchText ? 'AND search_match(name, @searchText)' : '';
    const sql = `SELECT object_identifier AS objectIdentifier, name FROM organization_metadata_options
                 WHERE metadata_identifier = @definitionId ${search} ORDER BY ${order} LIMIT @limit OFFSET @offset`;
    return this.listQueries.get(sql).all({ definitionId, limit: query.limit, offset: query.offset, ...(query.searchText ? { searchText: query.searchText } : {}) }) as MetadataOption[];
  }

  option(definitionId: string, objectIdentifier: string): MetadataOption | undefined {
    return this.selectOption.get(definitionId, objectIdentifier);
  }

  addOption(definitionId: string, option: MetadataOption): void {
    this.insertOption.run(option.objectIdentifier, definitionId, option.name, this.nextSeq.get());
  }

  rename(definitionId: string, objectIdentifier: string, name: string): boolean {
    return this.renameOption.run(name, definitionId, objectIdentifier).changes > 0;
  }

  remove(definitionId: string, objectIdentifier: string): boolean {
    return this.deleteOption.run(definitionId, objectIdentifier).changes > 0;
  }

  private toDefinition(row: DefinitionRow): MetadataDefinition {
    return {
      objectIdentifier: row.object_identifier,
      name: row.name,
      description: row.description,
      dataType: row.data_type,
      isRequired: row.is_required === 1,
      options: this.selectOptions.all(row.object_identifier),
    };
  }
}
