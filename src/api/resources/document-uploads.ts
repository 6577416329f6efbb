import { Resource, pagedGet, seg } from './resource.js';
import type { ListOptions, PagedList } from '../paging.js';
import type { CallOptions } from '../transport.js';
import type { PlaybookDocumentUpload, PlaybookDocumentUploadDetails, PlaybookDocumentUploadInput, Query } from '../types.js';

type ListQuery = Omit<Query<'listDocumentUploads'>, 'pageNumber' | 'pageSize'>;

/** A playbook's document-upload batches. */
export class DocumentUploads extends Resource {
  private prefix(playbook: string): string {
    return `/playbooks/${seg(playbook)}/document-uploads`;
  }
  list(playbookIdentifier: string, query: ListQuery = {}, opts: ListOptions = {}): PagedList<PlaybookDocumentUpload> {
    return pagedGet(this.t, this.prefix(playbookIdentifier), query, opts);
  }
  create(playbookIdentifier: string, input: PlaybookDocumentUploadInput, opts: CallOptions<PlaybookDocumentUpload> = {}): Promise<PlaybookDocumentUpload> {
    return this.t.json({ method: 'POST', path: this.prefix(playbookIdentifier), json: input }, opts);
  }
  get(playbookIdentifier: string, id: string, opts: CallOptions = {}): Promise<PlaybookDocumentUpload> {
    return this.t.json({ method: 'GET', path: `${this.prefix(playbookIdentifier)}/${seg(id)}` }, opts);
  }
  delete(playbookIdentifier: string, id: string, opts: CallOptions = {}): Promise<void> {
    return this.t.json({ method: 'DELETE', path: `${this.prefix(playbookIdentifier)}/${seg(id)}` }, opts);
  }
  /** Counters, failedReasonSummary and fileTypeSummary of the batch. */
  details(playbookIdentifier: string, id: string, opts: CallOptions = {}): Promise<PlaybookDocumentUploadDetails> {
    return this.t.json({ method: 'GET', path: `${this.prefix(playbookIdentifier)}/${seg(id)}/details` }, opts);
  }
  /** Marks the batch complete; doing so twice leaves it complete, so the PATCH is safe to repeat. */
  complete(playbookIdentifier: string, id: string, opts: CallOptions = {}): Promise<PlaybookDocumentUpload> {
    return this.t.json({ method: 'PATCH', path: `${this.prefix(playbookIdentifier)}/${seg(id)}/complete` }, { idempotent: true, ...opts });
  }
}
