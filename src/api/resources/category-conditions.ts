import { Resource, pagedGet, seg } from './resource.js';
import { referencePrefix, type ReferencePath } from './template-columns.js';
import type { ListOptions, PagedList } from '../paging.js';
import type { CallOptions } from '../transport.js';
import type { CategoryCondition, CategoryConditionInput } from '../types.js';

export interface ConditionPath extends ReferencePath {
  conditionIdentifier: string;
}

export class CategoryConditions extends Resource {
  private prefix(c: ConditionPath): string {
    return `${referencePrefix(c)}/conditions/${seg(c.conditionIdentifier)}/category-conditions`;
  }
  list(condition: ConditionPath, opts: ListOptions = {}): PagedList<CategoryCondition> {
    return pagedGet(this.t, this.prefix(condition), {}, opts, { page: 'page', size: 'pageSize' });
  }
  create(condition: ConditionPath, input: CategoryConditionInput, opts: CallOptions<CategoryCondition> = {}): Promise<CategoryCondition> {
    return this.t.json({ method: 'POST', path: this.prefix(condition), json: input }, opts);
  }
  get(condition: ConditionPath, id: string, opts: CallOptions = {}): Promise<CategoryCondition> {
    return this.t.json({ method: 'GET', path: `${this.prefix(condition)}/${seg(id)}` }, opts);
  }
  update(condition: ConditionPath, id: string, input: CategoryConditionInput, opts: CallOptions = {}): Promise<CategoryCondition> {
    return this.t.json({ method: 'PUT', path: `${this.prefix(condition)}/${seg(id)}`, json: input }, opts);
  }
  delete(condition: ConditionPath, id: string, opts: CallOptions = {}): Promise<void> {
    return this.t.json({ method: 'DELETE', path: `${this.prefix(condition)}/${seg(id)}` }, opts);
  }
}
