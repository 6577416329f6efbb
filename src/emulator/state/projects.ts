// Projects: containers of documents and assistants. A personal project is visible to its owner only.
import type Database from 'better-sqlite3';
import type { StoredMetadataValue } from '../service/metadata-values.js';
import { applyMigrations } from './database.js';
import { type ColumnFilter, filterClause, StatementCache } from './list-query.js';
import { listedCondition, listingLagOf } from './listing-lag.js';

export interface Owner {
  id: string;
  name: string;
  email: string;
}

export interface ProjectRecord {
  objectIdentifier: string;
  tenant: string;
  name: string;
  description: string | null;
  dateAdded: string;
  isPersonal: boolean;
  owner: Owner;
  metadataValues: StoredMetadataValue[];
}

interface ProjectRow {
  object_identifier: string;
  tenant: string;
  name: string;
  description: string | null;
  date_added: string;
  is_personal: number;
  owner_id: string;
  owner_name: string;
  owner_email: string;
  metadata_values: string;
}

/** Sortable and filterable project columns (ItemSorting names) and their SQL expressions. */
export const PROJECT_COLUMNS: Record<string, string> = {
  dateAdded: 'date_added',
  name: 'name',
  description: 'description',
  projectName: 'name',
  resourceOwner: 'owner_name',
};

export interface ProjectQuery {
  tenant: string;
  userId: string;
  searchText?: string;
  sortColumn: string;
  desc: boolean;
  filter?: ColumnFilter;
  limit: number;
  offset: number;
}

const MIGRATIONS = [
  `CREATE TABLE projects (
     object_identifier TEXT PRIMARY KEY, tenant TEXT NOT NULL, name TEXT NOT NULL, description TEXT,
     date_added TEXT NOT NULL, seq INTEGER NOT NULL, is_personal INTEGER NOT NULL,
     owner_id TEXT NOT NULL, owner_name TEXT NOT NULL, owner_email TEXT NOT NULL, metadata_values TEXT NOT NULL);
   CREATE INDEX projects_by_tenant ON projects (tenant, seq);
   CREATE UNIQUE INDEX projects_by_seq ON projects (seq);
   CREATE UNIQUE INDEX one_personal_project_per_user ON projects (tenant, owner_id) WHERE is_personal = 1;`,
  // A project removed while the service lists late stays listed a while (src/emulator/state/listing-lag.ts):
  // its row is kept, marked with the time of its removal (ms), and gone for everything but lists.
  `ALTER TABLE projects ADD COLUMN removed_at INTEGER;`,
];

const VISIBLE = 'tenant = @tenant AND (is_personal = 0 OR owner_id = @userId)';
const PRESENT = 'removed_at IS NULL';

export class ProjectStore {
  private readonly insert;
  private readonly selectVisible;
  private readonly selectExists;
  private readonly selectPersonal;
  private readonly updateProject;
  private readonly deleteProject;
  private readonly markRemoved;
  private readonly purgeRemoved;
  private readonly lists: StatementCache;

  constructor(private readonly db: Database.Database) {
    applyMigrations(db, 'projects', MIGRATIONS);
    this.lists = new StatementCache(db);
    this.insert = db.prepare(
      `INSERT INTO projects (object_identifier, tenant, name, description, date_added, seq, is_personal, owner_id, owner_name, owner_email, metadata_values)
       VALUES (@objectIdentifier, @tenant, @name, @description, @dateAdded, (SELECT coalesce(max(seq), 0) + 1 FROM projects),
               @isPersonal, @ownerId, @ownerName, @ownerEmail, @metadataValues)`,
    );
    this.selectVisible = db.prepare<{ tenant: string; userId: string; id: string }, ProjectRow>(
      `SELECT * FROM projects WHERE object_identifier = @id AND ${VISIBLE} AND ${PRESENT}`,
    );
    this.selectExists = db.prepare<[string, string], number>(`SELECT 1 FROM projects WHERE tenant = ? AND object_identifier = ? AND ${PRESENT}`).pluck();
    this.selectPersonal = db.prepare<[string, string], ProjectRow>(`SELECT * FROM projects WHERE tenant = ? AND owner_id = ? AND is_personal = 1 AND ${PRESENT}`);
    this.updateProject = db.prepare(
      'UPDATE projects SET name = @name, description = @description, metadata_values = @metadataValues WHERE object_identifier = @objectIdentifier',
    );
    this.deleteProject = db.prepare('DELETE FROM projects WHERE object_identifier = ?');
    this.markRemoved = db.prepare('UPDATE projects SET removed_at = ? WHERE object_identifier = ?');
    this.purgeRemoved = db.prepare('DELETE FROM projects WHERE removed_at IS NOT NULL AND removed_at < ?');
  }

  create(project: ProjectRecord): void {
    this.insert.run({
      objectIdentifier: project.objectIdentifier,
      tenant: project.tenant,
      name: project.name,
      description: project.description,
      dateAdded: project.dateAdded,
      isPersonal: project.isPersonal ? 1 : 0,
      ownerId: project.owner.id,
      ownerName: project.owner.name,
      ownerEmail: project.owner.email,
      metadataValues: JSON.stringify(project.metadataValues),
    });
  }

  /** The project if it exists in this tenant and the user may see it. */
  find(tenant: string, userId: string, id: string): ProjectRecord | undefined {
    const row = this.selectVisible.get({ tenant, userId, id });
    return row && toProject(row);
  }

  exists(tenant: string, id: string): boolean {
    return this.selectExists.get(tenant, id) === 1;
  }

  personal(tenant: string, userId: string): ProjectRecord | undefined {
    const row = this.selectPersonal.get(tenant, userId);
    return row && toProject(row);
  }

  update(project: ProjectRecord): void {
    this.updateProject.run({
      objectIdentifier: project.objectIdentifier,
      name: project.name,
      description: project.description,
      metadataValues: JSON.stringify(project.metadataValues),
    });
  }

  delete(id: string, nowMs: number): void {
    const lag = listingLagOf(this.db);
    if (!lag) {
      this.deleteProject.run(id);
      return;
    }
    this.markRemoved.run(nowMs, id);
    // Rows whose removal every list shows by now are dropped for good.
    this.purgeRemoved.run(nowMs - lag.longestMs);
  }

  list(query: ProjectQuery): { items: ProjectRecord[]; totalCount: number } {
    // Late lists (a listing lag): a new project shows once its delay has passed, a removed one until its delay has.
    const lagging = listingLagOf(this.db) !== undefined;
    const conditions = [VISIBLE, lagging ? '(removed_at IS NULL OR still_listed(object_identifier, removed_at) = 1)' : PRESENT, ...listedCondition(this.db, 'object_identifier', 'date_added')];
    const params: Record<string, unknown> = { tenant: query.tenant, userId: query.userId };
    if (query.searchText) {
      conditions.push('search_match(name, @searchText)');
      params.searchText = query.searchText;
    }
    if (query.filter) {
      conditions.push(filterClause(query.filter));
      params.filterTerm = query.filter.term;
    }
    const where = conditions.join(' AND ');
    const direction = query.desc ? 'DESC' : 'ASC';
    const totalCount = this.lists.get(`SELECT count(*) FROM projects WHERE ${where}`).pluck().get(params) as number;
    const rows = this.lists
      .get(`SELECT * FROM projects WHERE ${where} ORDER BY ${query.sortColumn} ${direction}, seq ${direction} LIMIT @limit OFFSET @offset`)
      .all({ ...params, limit: query.limit, offset: query.offset }) as ProjectRow[];
    return { items: rows.map(toProject), totalCount };
  }
}

function toProject(row: ProjectRow): ProjectRecord {
  return {
    objectIdentifier: row.object_identifier,
    tenant: row.tenant,
    name: row.name,
    description: row.description,
    dateAdded: row.date_added,
    isPersonal: row.is_personal === 1,
    owner: { id: row.owner_id, name: row.owner_name, email: row.owner_email },
    metadataValues: JSON.parse(row.metadata_values) as StoredMetadataValue[],
  };
}
