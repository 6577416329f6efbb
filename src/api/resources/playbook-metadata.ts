import { Resource, pagedGet, seg } from './resource.js';
import type { ListOptions, PagedList } from '../paging.js';
import type { CallOptions } from '../transport.js';
import type { MetadataValue, MetadataValueInput, PlaybookMetadataUpdateInput, Query } from '../types.js';

type ListQuery = Omit<Query<'listPlaybookMetadata'>, 'pageNumber' | 'pageSize'>;

export class PlaybookMetadata extends Resource {
  private prefix(playbook: string): string {
    return `/playbooks/${seg(playbook)}/metadata`;
  }
  list(playbookIdentifier: string, query: ListQuery = {}, opts: ListOptions = {}): PagedList<MetadataValue> {
    return pagedGet(this.t, this.prefix(playbookIdentifier), query, opts);
  }
  create(playbookIdentifier: string, input: MetadataValueInput, opts: CallOptions<MetadataValue> = {}): Promise<MetadataValue> {
    return this.t.json({ method: 'POST', path: this.prefix(playbookIdentifier), json: input }, opts);
  }
  get(playbookIdentifier: string, id: string, opts: CallOptions = {}): Promise<MetadataValue> {
    return this.t.json({ method: 'GET', path: `${this.prefix(playbookIdentifier)}/${seg(id)}` }, opts);
  }
  update(playbookIdentifier: string, id: string, input: PlaybookMetadataUpdateInput, opts: CallOptions = {}): Promise<MetadataValue> {
    return this.t.json({ method: 'PUT', path: `${this.prefix(playbookIdentifier)}/${seg(id)}`, json: input }, opts);
  }
  delete(playbookIdentifier: string, id: string, opts: CallOptions = {}): Promise<void> {
    return this.t.json({ method: 'DELETE', path: `${this.prefix(playbookIdentifier)}/${seg(id)}` }, opts);
  }
  /** Adds a category option to a category-typed value; adding the same option twice changes nothing. */
  addCategory(playbookIdentifier: string, id: string, optionIdentifier: string, opts: CallOptions = {}): Promise<void> {
    return this.t.json(
      { method: 'POST', path: `${this.prefix(playbookIdentifier)}/${seg(id)}/categories`, json: { optionIdentifier } },
      { idempotent: true, ...opts },
    );
  }
  removeCategory(playbookIdentifier: string, id: string, optionIdentifier: string, opts: CallOptions = {}): Promise<void> {
    return this.t.json({ method: 'DELETE', path: `${this.prefix(playbookIdentifier)}/${seg(id)}/categories/${seg(optionIdentifier)}` }, opts);
  }
}
