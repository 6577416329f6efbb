import { Resource, pagedGet, seg } from './resource.js';
import type { ListOptions, PagedList } from '../paging.js';
import type { CallOptions } from '../transport.js';
import type { OrganizationMetadataOption, Query } from '../types.js';

type ListQuery = Omit<Query<'listOrganizationMetadataOptions'>, 'pageNumber' | 'pageSize'>;

/** The selectable options of one organization metadata field. */
export class OrganizationMetadataOptions extends Resource {
  private prefix(definition: string): string {
    return `/projects/organization-metadata/${seg(definition)}/options`;
  }
  list(organizationMetadataIdentifier: string, query: ListQuery = {}, opts: ListOptions = {}): PagedList<OrganizationMetadataOption> {
    return pagedGet(this.t, this.prefix(organizationMetadataIdentifier), query, opts);
  }
  create(organizationMetadataIdentifier: string, name: string, opts: CallOptions<OrganizationMetadataOption> = {}): Promise<OrganizationMetadataOption> {
    return this.t.json({ method: 'POST', path: this.prefix(organizationMetadataIdentifier), json: { name } }, opts);
  }
  get(organizationMetadataIdentifier: string, optionIdentifier: string, opts: CallOptions = {}): Promise<OrganizationMetadataOption> {
    return this.t.json({ method: 'GET', path: `${this.prefix(organizationMetadataIdentifier)}/${seg(optionIdentifier)}` }, opts);
  }
  update(organizationMetadataIdentifier: string, optionIdentifier: string, name: string, opts: CallOptions = {}): Promise<OrganizationMetadataOption> {
    return this.t.json({ method: 'PUT', path: `${this.prefix(organizationMetadataIdentifier)}/${seg(optionIdentifier)}`, json: { name } }, opts);
  }
  delete(organizationMetadataIdentifier: string, optionIdentifier: string, opts: CallOptions = {}): Promise<void> {
    return this.t.json({ method: 'DELETE', path: `${this.prefix(organizationMetadataIdentifier)}/${seg(optionIdentifier)}` }, opts);
  }
}
