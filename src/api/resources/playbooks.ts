import { Resource, pagedGet } from './resource.js';
import { PagedList, type ListOptions } from '../paging.js';
import type { CallOptions } from '../transport.js';
import type { FileInput } from '../multipart.js';
import type { Playbook, PlaybookImportTask, PlaybookInput, PlaybookSearchRequest, Query } from '../types.js';

type ListQuery = Omit<Query<'listPlaybooks'>, 'pageNumber' | 'pageSize'>;
type SearchBody = Omit<PlaybookSearchRequest, 'pageNumber' | 'pageSize'>;

export class Playbooks extends Resource {
  list(query: ListQuery = {}, opts: ListOptions = {}): PagedList<Playbook> {
    return pagedGet(this.t, '/playbooks', query, opts);
  }
  create(input: PlaybookInput, opts: CallOptions<Playbook> = {}): Promise<Playbook> {
    return this.t.json({ method: 'POST', path: '/playbooks', json: input }, opts);
  }
  /** Starts an import of a playbook zip; the service answers 202 with a task and works in the background. */
  import(zip: FileInput, opts: CallOptions<PlaybookImportTask> = {}): Promise<PlaybookImportTask> {
    return this.t.json({ method: 'POST', path: '/playbooks/import', multipart: [{ name: 'importZip', file: { contentType: 'application/zip', ...zip } }] }, opts);
  }
  /** Searches the playbooks visible to the caller; paging travels in the body. */
  search(body: SearchBody = {}, opts: ListOptions = {}): PagedList<Playbook> {
    return this.searchAt('/playbooks/search', body, opts);
  }
  /** Searches all playbooks of the organization. */
  searchAll(body: SearchBody = {}, opts: ListOptions = {}): PagedList<Playbook> {
    return this.searchAt('/playbooks/search/all', body, opts);
  }
  private searchAt(path: string, body: SearchBody, opts: ListOptions): PagedList<Playbook> {
    // A search changes nothing, so its POST is safe to repeat.
    return new PagedList<Playbook>(
      (pageNumber, pageSize, signal) => this.t.json({ method: 'POST', path, json: { ...body, pageNumber, pageSize } }, { signal, idempotent: true }),
      this.t.pages.listOptions(path, opts),
    );
  }
}
