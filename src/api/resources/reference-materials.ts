import { Resource, seg, unpagedGet } from './resource.js';
import type { PagedList } from '../paging.js';
import type { CallOptions } from '../transport.js';
import type { ReferenceMaterial, ReferenceMaterialInput, ReferenceMaterialUpdateInput } from '../types.js';

export class ReferenceMaterials extends Resource {
  private prefix(playbook: string): string {
    return `/playbooks/${seg(playbook)}/reference-materials`;
  }
  /** The whole list: the service does not page it. */
  list(playbookIdentifier: string): PagedList<ReferenceMaterial> {
    return unpagedGet(this.t, this.prefix(playbookIdentifier), {});
  }
  create(playbookIdentifier: string, input: ReferenceMaterialInput, opts: CallOptions<ReferenceMaterial> = {}): Promise<ReferenceMaterial> {
    return this.t.json({ method: 'POST', path: this.prefix(playbookIdentifier), json: input }, opts);
  }
  get(playbookIdentifier: string, id: string, opts: CallOptions = {}): Promise<ReferenceMaterial> {
    return this.t.json({ method: 'GET', path: `${this.prefix(playbookIdentifier)}/${seg(id)}` }, opts);
  }
  update(playbookIdentifier: string, id: string, input: ReferenceMaterialUpdateInput, opts: CallOptions = {}): Promise<ReferenceMaterial> {
    return this.t.json({ method: 'PUT', path: `${this.prefix(playbookIdentifier)}/${seg(id)}`, json: input }, opts);
  }
  /** Answers 409 (ConflictError) while the material is locked. */
  delete(playbookIdentifier: string, id: string, opts: CallOptions = {}): Promise<void> {
    return this.t.json({ method: 'DELETE', path: `${this.prefix(playbookIdentifier)}/${seg(id)}` }, opts);
  }
}
