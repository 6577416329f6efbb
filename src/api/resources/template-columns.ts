import { Resource, pagedGet, seg } from './resource.js';
import type { ListOptions, PagedList } from '../paging.js';
import type { CallOptions } from '../transport.js';
import type { TemplateColumn, TemplateColumnInput } from '../types.js';

/** Where a reference lives: playbook, assembly, reference. */
export interface ReferencePath {
  playbookIdentifier: string;
  assemblyIdentifier: string;
  referenceIdentifier: string;
}

export function referencePrefix(r: ReferencePath): string {
  return `/playbooks/${seg(r.playbookIdentifier)}/assemblies/${seg(r.assemblyIdentifier)}/references/${seg(r.referenceIdentifier)}`;
}

export class TemplateColumns extends Resource {
  private prefix(r: ReferencePath): string {
    return `${referencePrefix(r)}/template-columns`;
  }
  list(ref: ReferencePath, opts: ListOptions = {}): PagedList<TemplateColumn> {
    return pagedGet(this.t, this.prefix(ref), {}, opts, { page: 'page', size: 'pageSize' });
  }
  create(ref: ReferencePath, input: TemplateColumnInput, opts: CallOptions<TemplateColumn> = {}): Promise<TemplateColumn> {
    return this.t.json({ method: 'POST', path: this.prefix(ref), json: input }, opts);
  }
  get(ref: ReferencePath, id: string, opts: CallOptions = {}): Promise<TemplateColumn> {
    return this.t.json({ method: 'GET', path: `${this.prefix(ref)}/${seg(id)}` }, opts);
  }
  update(ref: ReferencePath, id: string, input: TemplateColumnInput, opts: CallOptions = {}): Promise<TemplateColumn> {
    return this.t.json({ method: 'PUT', path: `${this.prefix(ref)}/${seg(id)}`, json: input }, opts);
  }
  delete(ref: ReferencePath, id: string, opts: CallOptions = {}): Promise<void> {
    return this.t.json({ method: 'DELETE', path: `${this.prefix(ref)}/${seg(id)}` }, opts);
  }
}
