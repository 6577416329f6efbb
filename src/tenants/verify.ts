// Proof that a migration's target matches its source: projects (name, description, metadata),
// folder paths, documents (name and path, size, sha256 of the content read through each side's
// `url`, key/value metadata) and playbooks (archives equal but for ids and dates). Every
// difference is listed. Both listings are written to a temporary SQLite file and joined there:
// memory stays flat however many documents a project holds.
import { openScratchDb } from '../store/scratch-db.js';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import PQueue from 'p-queue';
import { isDeepStrictEqual } from 'node:util';
import type { FerryClient } from '../api/client.js';
import type { Document, Playbook, Project } from '../api/types.js';
import { exportPlaybook } from '../playbooks/export.js';
import { PLAYBOOK_PATH, comparable } from '../playbooks/format.js';
import { openArchive } from '../playbooks/read.js';
import { visible } from '../text.js';
import { logicalPath } from '../backends/project/source.js';
import { metadataEntry } from '../mapping/metadata.js';

export interface Difference {
  kind: 'project' | 'folder' | 'document' | 'playbook';
  /** Which project or playbook (source id), and the path inside it when there is one. */
  where: string;
  what: string;
}

export interface VerifyCounts {
  projects: number;
  folders: number;
  documents: number;
  bytesHashed: number;
  playbooks: number;
}

/** Most differences listed; the rest are counted. */
const MAX_LISTED = 1_000;

export class Verification {
  readonly differences: Difference[] = [];
  differenceCount = 0;
  readonly counts: VerifyCounts = { projects: 0, folders: 0, documents: 0, bytesHashed: 0, playbooks: 0 };

  constructor(
    private readonly from: FerryClient,
    private readonly to: FerryClient,
    private readonly concurrency = 8,
  ) {}

  private differ(kind: Difference['kind'], where: string, what: string): void {
    this.differenceCount++;
    if (this.differences.length < MAX_LISTED) this.differences.push({ kind, where: visible(where), what: visible(what) });
  }

  /** A source project and its counterpart (undefined: none was found on the target). */
  async project(source: Project, targetId: string | undefined, signal?: AbortSignal): Promise<void> {
    this.counts.projects++;
    const where = `project ${source.name ?? ''} (${source.objectIdentifier})`;
    if (!targetId) return this.differ('project', where, 'missing on the target');
    const target = await this.to.projects.get(targetId);
    if (target.name !== source.name) this.differ('project', where, `name "${target.name}" on the target`);
    if ((target.description ?? '') !== (source.description ?? '')) this.differ('project', where, `description differs on the target`);
    const a = projectMetadata(source);
    const b = projectMetadata(target);
    if (!isDeepStrictEqual(a, b)) this.differ('project', where, `metadata differs: source ${JSON.stringify(a)}, target ${JSON.stringify(b)}`);
    await this.documents(source.objectIdentifier, targetId, where, signal);
  }

  private async documents(sourceId: string, targetId: string, where: string, signal?: AbortSignal): Promise<void> {
    const scratch = await openScratchDb('verify');
    const { db } = scratch;
    try {
      // The index is made once both listings are in: a listing comes in date order, which in a
      // real tenant has nothing to do with path order, and rows put into the index one by one at
      // random places cost more as it grows (2 million rows: 25.6 us a document, against 6.9 us
      // for the same rows indexed after; 15.2 against 7.8 at 200,000).
      db.exec('CREATE TABLE docs (side TEXT, path TEXT, dir INTEGER, id TEXT, size INTEGER, url TEXT, meta TEXT, added INTEGER, failed INTEGER)');
      const insert = db.prepare('INSERT INTO docs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
      const log = this.from.transport.logger;
      let phase = Date.now();
      const lap = (what: string) => {
        const now = Date.now();
        log.debug({ project: sourceId, ms: now - phase }, `verify: ${what}`);
        phase = now;
      };
      for (const [side, client, id] of [['s', this.from, sourceId], ['t', this.to, targetId]] as const) {
        let batch: Document[] = [];
        const flush = db.transaction((docs: Document[]) => {
          for (const d of docs) insert.run(side, logicalPath(d) ?? '/', d.isDirectory ? 1 : 0, d.objectIdentifier, d.size ?? 0, d.url ?? null, JSON.stringify(ownMetadata(d)), Date.parse(d.dateAdded ?? '') || 0, d.uploadFailedReason ? 1 : 0);
        });
        for await (const d of client.documents.list(id, { flattenList: true, includePath: true, hidePackagedFiles: false }, { pageSize: 1000, ...(signal ? { signal } : {}) })) {
          batch.push(d);
          if (batch.length >= 1000) {
            flush(batch);
            batch = [];
          }
        }
        flush(batch);
        lap(side === 's' ? 'source listed' : 'target listed');
      }
      db.exec('CREATE INDEX docs_path ON docs (side, path, added)');
      lap('listings indexed');

      // Folders, both ways.
      for (const row of db.prepare("SELECT path, side FROM docs WHERE dir = 1 GROUP BY path HAVING count(DISTINCT side) = 1").iterate() as IterableIterator<{ path: string; side: string }>) {
        this.differ('folder', `${where} ${row.path}`, row.side === 's' ? 'missing on the target' : 'on the target only');
      }
      this.counts.folders += db.prepare("SELECT count(*) FROM docs WHERE side = 's' AND dir = 1").pluck().get() as number;

      // Documents: the newest source document with content at each path (what a migration
      // carries) against every target document at that path.
      db.exec(
        `CREATE TABLE pairs AS
         WITH s AS (SELECT path, id, size, url, meta, row_number() OVER (PARTITION BY path ORDER BY added DESC) AS n FROM docs WHERE side = 's' AND dir = 0 AND url IS NOT NULL AND failed = 0)
         SELECT s.path, s.id AS sid, s.size AS ssize, s.url AS surl, s.meta AS smeta,
                (SELECT count(*) FROM docs t WHERE t.side = 't' AND t.dir = 0 AND t.path = s.path) AS tcount,
                (SELECT json_object('id', id, 'size', size, 'url', url, 'meta', meta) FROM docs t WHERE t.side = 't' AND t.dir = 0 AND t.path = s.path ORDER BY added DESC LIMIT 1) AS t
         FROM s WHERE n = 1`,
      );
      lap('documents paired');
      const page = db.prepare('SELECT rowid, * FROM pairs WHERE rowid > ? ORDER BY rowid LIMIT 500');
      type Pair = { rowid: number; path: string; sid: string; ssize: number; surl: string; smeta: string; tcount: number; t: string | null };
      // Read a page at a time: the pairs of a large project never sit in memory together.
      const pairs = function* (): Generator<Pair> {
        for (let after = 0; ; ) {
          const rows = page.all(after) as Pair[];
          if (rows.length === 0) return;
          yield* rows;
          after = (rows[rows.length - 1] as Pair).rowid;
        }
      };
      const queue = new PQueue({ concurrency: this.concurrency });
      for (const p of pairs()) {
        this.counts.documents++;
        const at = `${where} ${p.path}`;
        if (p.tcount === 0 || !p.t) {
          this.differ('document', at, 'missing on the target');
          continue;
        }
        if (p.tcount > 1) this.differ('document', at, `${p.tcount} documents at this path on the target (expected 1)`);
        const t = JSON.parse(p.t) as { id: string; size: number; url: string | null; meta: string };
        if (t.size !== p.ssize) this.differ('document', at, `size ${t.size} on the target, ${p.ssize} at the source`);
        if (t.meta !== p.smeta) this.differ('document', at, `metadata ${t.meta} on the target, ${p.smeta} at the source`);
        if (!t.url) {
          this.differ('document', at, 'the target document carries no url (no content)');
          continue;
        }
        void queue.add(async () => {
          const [a, b] = await Promise.all([sha256Of(this.from, p.surl, p.path, signal), sha256Of(this.to, t.url as string, p.path, signal)]);
          this.counts.bytesHashed += a.bytes + b.bytes;
          if (a.hash !== b.hash) this.differ('document', at, `content differs (sha256 ${b.hash.slice(0, 12)}… on the target, ${a.hash.slice(0, 12)}… at the source)`);
        });
        if (queue.size > this.concurrency * 4) await queue.onSizeLessThan(this.concurrency * 2);
      }
      await queue.onIdle();
      lap('contents compared');
      for (const row of db.prepare("SELECT DISTINCT path FROM docs t WHERE side = 't' AND dir = 0 AND NOT EXISTS (SELECT 1 FROM docs s WHERE s.side = 's' AND s.dir = 0 AND s.url IS NOT NULL AND s.failed = 0 AND s.path = t.path)").pluck().iterate() as IterableIterator<string>) {
        this.differ('document', `${where} ${row}`, 'on the target only');
      }
      lap('target-only documents found');
    } finally {
      await scratch.close();
    }
  }

  /** A source playbook and its counterpart: both exported, compared but for ids and dates. */
  async playbook(source: Playbook, targetId: string | undefined, signal?: AbortSignal): Promise<void> {
    this.counts.playbooks++;
    const where = `playbook ${source.name ?? ''} (${source.objectIdentifier})`;
    if (!targetId) return this.differ('playbook', where, 'missing on the target');
    const target = (await this.to.playbooks.searchAll().all()).find((p) => p.objectIdentifier === targetId);
    if (!target) return this.differ('playbook', where, `its counterpart ${targetId} is gone from the target`);
    const dir = await mkdtemp(join(tmpdir(), 'ferry-verify-'));
    try {
      await exportPlaybook(this.from, source, join(dir, 'source.zip'), signal);
      await exportPlaybook(this.to, target, join(dir, 'target.zip'), signal);
      const [a, b] = await Promise.all([openArchive(join(dir, 'source.zip')), openArchive(join(dir, 'target.zip'))]);
      const ca = comparable(a.playbook);
      const cb = comparable(b.playbook);
      if (!isDeepStrictEqual(ca, cb)) this.differ('playbook', where, `content differs: ${firstDifference(ca, cb, '')}`);
      // The files beside playbook.json (compared above, where ids are masked) must be the same bytes.
      const files = (x: typeof a) => x.manifest.entries.filter((e) => e.path !== PLAYBOOK_PATH).map((e) => e.sha256).sort();
      if (!isDeepStrictEqual(files(a), files(b))) this.differ('playbook', where, 'the files it holds (assembly templates) differ');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

async function sha256Of(client: FerryClient, url: string, name: string, signal?: AbortSignal): Promise<{ hash: string; bytes: number }> {
  const res = await client.documents.download({ url, name }, signal ? { signal } : {});
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { hash: hash.digest('hex'), bytes };
}

/** Key/value metadata of a document, sorted, without what ferry itself writes. */
function ownMetadata(d: Document): [string, string][] {
  return (d.metadata ?? [])
    .filter((m) => m.key && !m.key.startsWith('ferry.'))
    .map((m): [string, string] => [m.key as string, m.value ?? ''])
    .sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
}

/** A project's metadata by definition name, with option names instead of ids. */
function projectMetadata(p: Project): unknown[] {
  return (p.metadataValues ?? [])
    .map(metadataEntry)
    .map((v) => ({ definition: v.organizationMetadataName, isYes: v.isYes, text: v.text, decimalValue: v.decimalValue, date: v.date, single: v.singleCategoryName, categories: [...(v.categoryNames ?? [])].sort() }))
    .sort((x, y) => String(x.definition).localeCompare(String(y.definition)));
}

/** Where two comparable values first part, as a JSON path. */
function firstDifference(a: unknown, b: unknown, path: string): string {
  if (isDeepStrictEqual(a, b)) return '';
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) {
      const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}/${k}`);
      if (d) return d;
    }
  }
  return `${path || '/'}: ${JSON.stringify(a)?.slice(0, 80)} at the source, ${JSON.stringify(b)?.slice(0, 80)} on the target`;
}
