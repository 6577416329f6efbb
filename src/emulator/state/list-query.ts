// Building blocks for the dynamic list queries (search, column filters, sorting, paging).
// The SQL text varies only with the shape of the query, so statements are cached by text.
import type Database from 'better-sqlite3';

export const ITEM_FILTERING = [
  'equals',
  'contains',
  'doesNotContain',
  'doesNotEqual',
  'greaterThanOrEqualTo',
  'lessThanOrEqualTo',
  'greaterThan',
  'lessThan',
] as const;
export type ItemFiltering = (typeof ITEM_FILTERING)[number];

export interface ColumnFilter {
  /** SQL expression of the column (numeric form used when `numeric`, text form otherwise). */
  numericExpression: string;
  textExpression: string;
  operation: ItemFiltering;
  term: string | number;
  numeric: boolean;
}

const COMPARATORS: Partial<Record<ItemFiltering, string>> = {
  greaterThanOrEqualTo: '>=',
  lessThanOrEqualTo: '<=',
  greaterThan: '>',
  lessThan: '<',
};

/** A WHERE fragment for one column filter, using the named parameter @filterTerm. Nulls never match a positive test. */
export function filterClause(filter: ColumnFilter): string {
  const text = `fold_case(CAST(${filter.textExpression} AS TEXT))`;
  const value = filter.numeric ? `CAST(${filter.numericExpression} AS REAL)` : text;
  const term = filter.numeric ? '@filterTerm' : 'fold_case(@filterTerm)';
  switch (filter.operation) {
    case 'equals':
      return `${value} = ${term}`;
    case 'doesNotEqual':
      return `(${value} IS NULL OR ${value} <> ${term})`;
    case 'contains':
      return `instr(${text}, fold_case(CAST(@filterTerm AS TEXT))) > 0`;
    case 'doesNotContain':
      return `(${text} IS NULL OR instr(${text}, fold_case(CAST(@filterTerm AS TEXT))) = 0)`;
    default:
      return `${value} ${COMPARATORS[filter.operation]} ${term}`;
  }
}

export class StatementCache {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  get(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
