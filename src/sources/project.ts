// A project's documents as a source: the tree under a folder (or the root), each document an entry
// keyed by its path, its content streamed from its `url`. Documents never change (a changed file
// is a new document), so a document's id is its change marker. A path that holds several
// documents (a file uploaded again) is carried from the newest; documents without content are
// reported with the reason. The listing is read once; per path only the newest document's few
// fields are kept until the listing ends. A document without a `url` is reported, not pulled.
import { PassThrough, type Readable } from 'node:stream';
import picomatch from 'picomatch';
import type { FerryClient } from '../api/client.js';
import type { Document } from '../api/types.js';
import { checkDecodedName } from './names.js';
import { SourceError, type Source, type SourceEntry } from './types.js';

export interface ProjectSourceOptions {
  /** Folder path under the project root ('' for the whole project). */
  from?: string | undefined;
  include?: string[] | undefined;
  exclude?: string[] | undefined;
}

interface Newest {
  doc: Pick<Document, 'objectIdentifier' | 'name' | 'url' | 'size' | 'dateAdded'>;
  older: number;
}

export class ProjectSource implements Source {
  readonly description: string;
  private readonly prefix: string;
  private readonly wanted: (key: string) => boolean;

  constructor(
    private readonly client: FerryClient,
    private readonly project: string,
    opts: ProjectSourceOptions = {},
  ) {
    const from = (opts.from ?? '').split('/').filter((s) => s !== '' && s !== '.').join('/');
    this.prefix = from ? `/${from}/` : '/';
    this.description = `project ${project}${from ? `/${from}` : ''}`;
    const included = opts.include?.length ? picomatch(opts.include, { dot: true }) : () => true;
    const excluded = opts.exclude?.length ? picomatch(opts.exclude, { dot: true }) : () => false;
    this.wanted = (key) => included(key) && !excluded(key);
  }

  async prepare(): Promise<void> {
    try {
      await this.client.projects.get(this.project);
    } catch (err) {
      throw new SourceError(`project ${this.project} cannot be read: ${(err as Error).message}`);
    }
  }

  async *entries(signal?: AbortSignal): AsyncIterable<SourceEntry> {
    const newest = new Map<string, Newest>();
    let sawFrom = this.prefix === '/';
    for await (const doc of this.client.documents.list(this.project, { flattenList: true, includePath: true, hidePackagedFiles: false, desc: false })) {
      if (signal?.aborted) return;
      const path = doc.path ?? (doc.name ? `/${doc.name}` : undefined);
      if (!path) continue;
      if (`${path}/` === this.prefix) sawFrom = true;
      if (!path.startsWith(this.prefix)) continue;
      sawFrom = true;
      const key = path.slice(this.prefix.length);
      if (doc.isDirectory) {
        if (this.wanted(`${key}/`) || this.wanted(key)) yield { kind: 'dir', key };
        continue;
      }
      if (!this.wanted(key)) continue;
      const bad = key.split('/').map(checkDecodedName).find((v) => !v.ok);
      if (bad && !bad.ok) {
        yield { kind: 'problem', key: key.split('/').map((s) => { const v = checkDecodedName(s); return v.ok ? v.name : v.shown; }).join('/'), outcome: 'failed', reason: bad.reason };
        continue;
      }
      // A document whose processing failed still holds the bytes that were uploaded; one without
      // a url (a failed-upload record) has nothing to pull.
      if (!doc.url) {
        yield { kind: 'problem', key, outcome: 'skipped', reason: `no content: the document carries no url${doc.uploadFailedReason ? ` (its upload failed: ${doc.uploadFailedReason})` : ''}` };
        continue;
      }
      const seen = newest.get(key);
      const record = { objectIdentifier: doc.objectIdentifier, name: doc.name, url: doc.url, size: doc.size, dateAdded: doc.dateAdded };
      if (!seen) newest.set(key, { doc: record, older: 0 });
      else if (Date.parse(record.dateAdded ?? '') >= Date.parse(seen.doc.dateAdded ?? '')) newest.set(key, { doc: record, older: seen.older + 1 });
      else seen.older++;
    }
    if (!sawFrom) throw new SourceError(`the project has no folder ${this.prefix.slice(1, -1)}`);
    for (const [key, { doc, older }] of newest) {
      if (signal?.aborted) return;
      for (let i = 0; i < older; i++) yield { kind: 'problem', key, outcome: 'skipped', reason: 'an older document at the same path (a file uploaded again); the newest is pulled' };
      yield {
        kind: 'file',
        key,
        size: doc.size ?? 0,
        mtimeMs: Date.parse(doc.dateAdded ?? '') || 0,
        marker: doc.objectIdentifier as string,
        open: () => this.download(doc),
      };
    }
  }

  /** The content as a stream at once; the request starts when it is read. */
  private download(doc: Newest['doc']): Readable {
    const out = new PassThrough();
    this.client.documents.download(doc).then(
      (res) => {
        res.body.on('error', (err) => out.destroy(err));
        res.body.pipe(out);
      },
      (err: unknown) => out.destroy(err as Error),
    );
    return out;
  }

  async close(): Promise<void> {}
}
