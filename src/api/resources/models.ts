import { Resource, seg, unpagedGet } from './resource.js';
import type { PagedList } from '../paging.js';
import type { CallOptions } from '../transport.js';
import type { Model, Query } from '../types.js';

/** The model catalogue, served by the settings host. */
export class Models extends Resource {
  list(query: Query<'listModels'> = {}): PagedList<Model> {
    return unpagedGet(this.t, '/models', query, 'settings');
  }
  get(objectIdentifier: string, opts: CallOptions = {}): Promise<Model> {
    return this.t.json({ method: 'GET', host: 'settings', path: `/models/${seg(objectIdentifier)}` }, opts);
  }
  getByIdentifiers(modelIdentifiers: readonly string[], opts: CallOptions = {}): Promise<Model[]> {
    return this.t.json({ method: 'GET', host: 'settings', path: '/models/get-by-identifiers', query: { modelIdentifiers } }, opts);
  }
}
