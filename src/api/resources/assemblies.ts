import { Resource, pagedGet, seg } from './resource.js';
import type { ListOptions, PagedList } from '../paging.js';
import type { CallOptions, StreamResponse } from '../transport.js';
import type { FileInput, MultipartPart } from '../multipart.js';
import type { Assembly, AssemblyDownloadUrl, Query, RichTextNode } from '../types.js';

type ListQuery = Omit<Query<'listAssemblies'>, 'pageNumber' | 'pageSize'>;

export interface AssemblyCreate {
  name: string;
  description: string;
  /** assemblyType, e.g. `docxFlowWide`. */
  type: string;
  playbookGroupId?: string;
  file?: FileInput;
}

export class Assemblies extends Resource {
  private prefix(playbook: string): string {
    return `/playbooks/${seg(playbook)}/assemblies`;
  }
  private one(playbook: string, id: string): string {
    return `${this.prefix(playbook)}/${seg(id)}`;
  }
  list(playbookIdentifier: string, query: ListQuery = {}, opts: ListOptions = {}): PagedList<Assembly> {
    return pagedGet(this.t, this.prefix(playbookIdentifier), query, opts);
  }
  create(playbookIdentifier: string, input: AssemblyCreate, opts: CallOptions<Assembly> = {}): Promise<Assembly> {
    const parts: MultipartPart[] = [
      { name: 'Name', value: input.name },
      { name: 'Description', value: input.description },
      { name: 'Type', value: input.type },
    ];
    if (input.playbookGroupId) parts.push({ name: 'PlaybookGroupId', value: input.playbookGroupId });
    if (input.file) parts.push({ name: 'File', file: input.file });
    return this.t.json({ method: 'POST', path: this.prefix(playbookIdentifier), multipart: parts }, opts);
  }
  get(playbookIdentifier: string, id: string, opts: CallOptions = {}): Promise<Assembly> {
    return this.t.json({ method: 'GET', path: this.one(playbookIdentifier, id) }, opts);
  }
  /** The response body is not shown in the spec; whatever comes back is ignored. */
  async delete(playbookIdentifier: string, id: string, opts: CallOptions = {}): Promise<void> {
    await this.t.json({ method: 'DELETE', path: this.one(playbookIdentifier, id) }, opts);
  }
  /** The template file as a stream (`usePdf` asks for a PDF rendering). */
  content(playbookIdentifier: string, id: string, usePdf = false, opts: CallOptions<StreamResponse> = {}): Promise<StreamResponse> {
    return this.t.stream({ method: 'GET', path: `${this.one(playbookIdentifier, id)}/content`, query: { usePdf } }, opts);
  }
  /** Replaces the template file; PUT, so it is retried like any idempotent call when the file is replayable. */
  replaceContent(playbookIdentifier: string, id: string, file: FileInput, opts: CallOptions = {}): Promise<unknown> {
    return this.t.json({ method: 'PUT', path: `${this.one(playbookIdentifier, id)}/content`, multipart: [{ name: 'file', file }] }, opts);
  }
  richText(playbookIdentifier: string, id: string, opts: CallOptions = {}): Promise<RichTextNode> {
    return this.t.json({ method: 'GET', path: `${this.one(playbookIdentifier, id)}/rich-text` }, opts);
  }
  updateRichText(playbookIdentifier: string, id: string, tree: RichTextNode, opts: CallOptions = {}): Promise<unknown> {
    return this.t.json({ method: 'PUT', path: `${this.one(playbookIdentifier, id)}/rich-text`, json: tree }, opts);
  }
  downloadUrl(playbookIdentifier: string, id: string, opts: CallOptions = {}): Promise<AssemblyDownloadUrl> {
    return this.t.json({ method: 'GET', path: `${this.one(playbookIdentifier, id)}/download-url` }, opts);
  }
}
