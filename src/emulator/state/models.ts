// The model catalogue (served on the settings host). One catalogue for all tenants.
import type Database from 'better-sqlite3';
import { applyMigrations } from './database.js';

export interface Model {
  objectIdentifier: string;
  name: string;
  description: string | null;
  hostedBy: string | null;
  supportsVision: boolean;
  supportsAudio: boolean;
  supportsWebSearch: boolean;
  supportsRemoteCodeInterpreter: boolean;
  supportsTools: boolean;
  supportsReasoning: boolean;
  payoutPercentage: number;
  maxOutputToken: number | null;
  contextLength: number;
}

export interface CatalogueEntry {
  model: Model;
  modelType: number;
  enabled: boolean;
}

const MIGRATIONS = [
  `CREATE TABLE models (
     object_identifier TEXT PRIMARY KEY, model_type INTEGER NOT NULL, enabled INTEGER NOT NULL,
     seq INTEGER NOT NULL, body TEXT NOT NULL);`,
];

interface ModelRow {
  body: string;
  model_type: number;
  enabled: number;
}

export class ModelStore {
  private readonly insert;
  private readonly selectAll;
  private readonly selectOne;

  constructor(db: Database.Database) {
    applyMigrations(db, 'models', MIGRATIONS);
    this.insert = db.prepare(
      `INSERT INTO models (object_identifier, model_type, enabled, seq, body)
       VALUES (?, ?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM models), ?)`,
    );
    this.selectAll = db.prepare<[], ModelRow>('SELECT body, model_type, enabled FROM models ORDER BY seq');
    this.selectOne = db.prepare<[string], ModelRow>('SELECT body, model_type, enabled FROM models WHERE object_identifier = ?');
  }

  add(entry: CatalogueEntry): void {
    this.insert.run(entry.model.objectIdentifier, entry.modelType, entry.enabled ? 1 : 0, JSON.stringify(entry.model));
  }

  all(): CatalogueEntry[] {
    return this.selectAll.all().map(toEntry);
  }

  find(objectIdentifier: string): CatalogueEntry | undefined {
    const row = this.selectOne.get(objectIdentifier);
    return row && toEntry(row);
  }
}

function toEntry(row: ModelRow): CatalogueEntry {
  return { model: JSON.parse(row.body) as Model, modelType: row.model_type, enabled: row.enabled === 1 };
}
