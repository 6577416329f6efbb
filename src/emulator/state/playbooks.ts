// Playbooks, and the searches over them (text, visibility, metadata values).
import type Database from 'better-sqlite3';
import { applyMigrations } from './database.js';
import { StatementCache } from './list-query.js';
import { listedCondition } from './listing-lag.js';
import { PLAYBOOK_METADATA_TABLE } from './playbook-metadata.js';
import type { Owner } from './projects.js';

export interface PlaybookRecord {
  objectIdentifier: string;
  tenant: string;
  name: string;
  description: string | null;
  isPrivate: boolean;
  organizationWide: boolean;
  dateAdded: string;
  owner: Owner;
}

/** The fields a create body or an archive gives; the rest come from the call. */
export interface PlaybookFields {
  name: string;
  description?: string | null | undefined;
  isPrivate: boolean;
  organizationWide: boolean;
}

/** A new playbook record, the same whether it was created by a call or by an import. */
export function newPlaybookRecord(fields: PlaybookFields, made: { objectIdentifier: string; tenant: string; dateAdded: string; owner: Owner }): PlaybookRecord {
  return {
    objectIdentifier: made.objectIdentifier,
    tenant: made.tenant,
    name: fields.name,
    description: fields.description ?? null,
    isPrivate: fields.isPrivate,
    organizationWide: fields.organizationWide,
    dateAdded: made.dateAdded,
    owner: made.owner,
  };
}

interface PlaybookRow {
  object_identifier: string;
  tenant: string;
  name: string;
  description: string | null;
  is_private: number;
  organization_wide: number;
  date_added: string;
  owner_id: string;
  owner_name: string;
  owner_email: string;
}

/** Sort keys (ItemSorting names that fit a playbook) and their SQL expressions. */
export const PLAYBOOK_SORTING: Record<string, string> = {
  dateAdded: 'date_added',
  name: 'fold_case(name)',
  playbookName: 'fold_case(name)',
  description: 'fold_case(description)',
  playbookDescription: 'fold_case(description)',
  orgWide: 'organization_wide',
  resourceOwner: 'fold_case(owner_name)',
};

/** A search filter on one metadata definition, its value already checked against the definition's dataType. */
export type MetadataFilter =
  | { definitionId: string; kind: 'text'; value: string }
  | { definitionId: string; kind: 'yesNo'; value: boolean }
  | { definitionId: string; kind: 'decimal'; value: number }
  | { definitionId: string; kind: 'date'; value: string }
  | { definitionId: string; kind: 'category'; value: string[] };

export interface PlaybookQuery {
  tenant: string;
  /** Only playbooks this user may see (not private, or their own); absent: all of the tenant's. */
  visibleTo?: string;
  searchText?: string;
  metadata: MetadataFilter[];
  sorting: string;
  desc: boolean;
  limit: number;
  offset: number;
}

const MIGRATIONS = [
  `CREATE TABLE playbooks (
     object_identifier TEXT PRIMARY KEY, tenant TEXT NOT NULL, seq INTEGER NOT NULL, name TEXT NOT NULL, description TEXT,
     is_private INTEGER NOT NULL, organization_wide INTEGER NOT NULL, date_added TEXT NOT NULL,
     owner_id TEXT NOT NULL, owner_name TEXT NOT NULL, owner_email TEXT NOT NULL);
   CREATE INDEX playbooks_by_tenant ON playbooks (tenant, seq);
   CREATE UNIQUE INDEX playbooks_by_seq ON playbooks (seq);`,
];

const VISIBLE = '(is_private = 0 OR owner_id = @visibleTo)';

/** The SQL test of one metadata filter against a stored value `m` (JSON of a StoredMetadataValue). */
function metadataCondition(filter: MetadataFilter, parameter: string): string {
  switch (filter.kind) {
    case 'text':
      return `instr(fold_case(json_extract(m.value, '$.text')), fold_case(${parameter})) > 0`;
    case 'yesNo':
      return `json_extract(m.value, '$.isYes') = ${parameter}`;
    case 'decimal':
      return `json_extract(m.value, '$.decimalValue') = ${parameter}`;
    case 'date':
      // Same calendar day (UTC), whatever the time of day and offset of either side.
      return `date(json_extract(m.value, '$.date')) = date(${parameter})`;
    case 'category':
      return `(json_extract(m.value, '$.singleCategoryIdentifier') IN (SELECT value FROM json_each(${parameter}))
               OR EXISTS (SELECT 1 FROM json_each(m.value, '$.categories') c WHERE c.value IN (SELECT value FROM json_each(${parameter}))))`;
  }
}

function metadataParameter(filter: MetadataFilter): unknown {
  if (filter.kind === 'yesNo') return filter.value ? 1 : 0;
  if (filter.kind === 'category') return JSON.stringify(filter.value);
  return filter.value;
}

export class PlaybookStore {
  private readonly insert;
  private readonly selectOne;
  private readonly lists: StatementCache;

  constructor(private readonly db: Database.Database) {
    applyMigrations(db, 'playbooks', MIGRATIONS);
    this.lists = new StatementCache(db);
    this.insert = db.prepare(
      `INSERT INTO playbooks (object_identifier, tenant, seq, name, description, is_private, organization_wide, date_added, owner_id, owner_name, owner_email)
       VALUES (@objectIdentifier, @tenant, (SELECT coalesce(max(seq), 0) + 1 FROM playbooks), @name, @description, @isPrivate, @organizationWide,
               @dateAdded, @ownerId, @ownerName, @ownerEmail)`,
    );
    this.selectOne = db.prepare<{ tenant: string; visibleTo: string; id: string }, PlaybookRow>(
      `SELECT * FROM playbooks WHERE object_identifier = @id AND tenant = @tenant AND ${VISIBLE}`,
    );
  }

  create(playbook: PlaybookRecord): void {
    this.insert.run({
      objectIdentifier: playbook.objectIdentifier,
      tenant: playbook.tenant,
      name: playbook.name,
      description: playbook.description,
      isPrivate: playbook.isPrivate ? 1 : 0,
      organizationWide: playbook.organizationWide ? 1 : 0,
      dateAdded: playbook.dateAdded,
      ownerId: playbook.owner.id,
      ownerName: playbook.owner.name,
      ownerEmail: playbook.owner.email,
    });
  }

  /** The playbook if it is the tenant's and the user may see it. */
  find(tenant: string, userId: string, id: string): PlaybookRecord | undefined {
    const row = this.selectOne.get({ tenant, visibleTo: userId, id });
    return row && toPlaybook(row);
  }

  search(query: PlaybookQuery): { items: PlaybookRecord[]; totalCount: number } {
    const conditions = ['tenant = @tenant', ...listedCondition(this.db, 'object_identifier', 'date_added')];
    const params: Record<string, unknown> = { tenant: query.tenant };
    if (query.visibleTo !== undefined) {
      conditions.push(VISIBLE);
      params.visibleTo = query.visibleTo;
    }
    if (query.searchText) {
      conditions.push('(search_match(name, @searchText) OR search_match(coalesce(description, \'\'), @searchText))');
      params.searchText = query.searchText;
    }
    query.metadata.forEach((filter, index) => {
      conditions.push(
        `EXISTS (SELECT 1 FROM ${PLAYBOOK_METADATA_TABLE} m WHERE m.playbook_identifier = playbooks.object_identifier
                 AND m.definition_identifier = @definition${index} AND ${metadataCondition(filter, `@value${index}`)})`,
      );
      params[`definition${index}`] = filter.definitionId;
      params[`value${index}`] = metadataParameter(filter);
    });
    const where = conditions.join(' AND ');
    const direction = query.desc ? 'DESC' : 'ASC';
    const sortExpression = PLAYBOOK_SORTING[query.sorting] as string;
    const totalCount = this.lists.get(`SELECT count(*) FROM playbooks WHERE ${where}`).pluck().get(params) as number;
    const rows = this.lists
      .get(`SELECT * FROM playbooks WHERE ${where} ORDER BY ${sortExpression} ${direction}, seq ${direction} LIMIT @limit OFFSET @offset`)
      .all({ ...params, limit: query.limit, offset: query.offset }) as PlaybookRow[];
    return { items: rows.map(toPlaybook), totalCount };
  }
}

function toPlaybook(row: PlaybookRow): PlaybookRecord {
  return {
    objectIdentifier: row.object_identifier,
    tenant: row.tenant,
    name: row.name,
    description: row.description,
    isPrivate: row.is_private === 1,
    organizationWide: row.organization_wide === 1,
    dateAdded: row.date_added,
    owner: { id: row.owner_id, name: row.owner_name, email: row.owner_email },
  };
}
