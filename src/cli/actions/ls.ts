// `ferry ls`: projects, or a project's folders and documents sorted by path (a folder before its
// contents): text for people (sizes, dates, names escaped), one JSON object (one line) for machines
// whose `items` are written one by one. The listing is sorted on disk as it comes (SpillSort), so a
// project of a million documents is never held in memory.
import type { Command } from 'commander';
import type { FerryClient } from '../../api/client.js';
import { ConfigurationError, FerryError, NotFoundError } from '../../api/errors.js';
import { describeTarget } from '../../api/target.js';
import type { Document } from '../../api/types.js';
import { visible } from '../../text.js';
import { logicalPath } from '../../backends/project/source.js';
import { createContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { uuidFlag } from '../shared.js';
import { isUuid } from '../../ids.js';
import { OWN_METADATA } from '../../backends/project/identity.js';
import { resolveProject } from '../../backends/project/named.js';
import type { JsonItems } from '../json-items.js';
import { Reply } from '../reply.js';
import { SpillSort, pathSortKey } from '../../store/spill-sort.js';
import { refusalOf } from '../../api/refusal.js';

interface LsOptions {
  recursive?: boolean;
  long?: boolean;
  json?: boolean;
}

export async function lsAction(where: string | undefined, opts: LsOptions, cmd: Command): Promise<void> {
  await listing(
    cmd,
    Reply.to(opts),
    'ls',
    where ?? '',
    (client, out) => (where === undefined || where === '' ? listProjects(client, out) : listProject(client, where, opts.recursive === true, out)),
    opts.long === true,
  );
}

/** `ferry playbooks list`: every playbook of the organization, as `export --all` and `backup` see them. */
export async function playbooksListAction(opts: { search?: string; json?: boolean }, cmd: Command): Promise<void> {
  await listing(cmd, Reply.to(opts), 'playbooks list', opts.search ?? '', async (client, out) => {
    for await (const p of client.playbooks.searchAll(opts.search ? { searchText: opts.search } : {})) {
      out.item({ id: p.objectIdentifier, name: p.name ?? null, description: p.description ?? null, dateAdded: p.dateAdded ?? null, isPrivate: p.isPrivate ?? null, organizationWide: p.organizationWide ?? null }, `${p.objectIdentifier}  ${day(p.dateAdded)}  ${visible(p.name ?? '')}`);
    }
  });
}

/** One listing run: a client, the entries `fill` finds, and the end, whatever happened. */
async function listing(cmd: Command, reply: Reply, command: string, where: string, fill: (client: FerryClient, out: Listing) => Promise<void>, long = false): Promise<void> {
  const { client } = createContext(cmd);
  const out = new Listing(reply, command, where, describeTarget(client.target), long);
  try {
    await fill(client, out);
    out.end(EXIT.ok);
  } catch (err) {
    // Under --json the object is closed with the error; otherwise it is reported as any other,
    // after what was listed before it.
    if (!reply.json) {
      out.end(EXIT.failed);
      throw err;
    }
    out.end(EXIT.failed, err instanceof Error ? err.message : String(err));
  } finally {
    await client.close();
  }
}

async function listProjects(client: FerryClient, out: Listing): Promise<void> {
  for await (const p of client.projects.list()) {
    out.item({ id: p.objectIdentifier, name: p.name ?? null, description: p.description ?? null, dateAdded: p.dateAdded ?? null }, `${p.objectIdentifier}  ${day(p.dateAdded)}  ${visible(p.name ?? '')}`);
  }
}

async function listProject(client: FerryClient, where: string, recursive: boolean, out: Listing): Promise<void> {
  const { project, rest } = await projectOf(client, where);
  const segments = rest.split('/').filter((s) => s !== '');
  try {
    await client.projects.get(project);
  } catch (err) {
    if (err instanceof NotFoundError) throw new FerryError(`no project ${project} at ${describeTarget(client.target)}`, { cause: err });
    throw err;
  }
  const folder = await resolveFolder(client, project, segments);
  if (folder.document) {
    // The path names a document: that one entry.
    out.document(folder.document, `/${segments.join('/')}`);
    return;
  }
  if (!recursive) {
    for await (const doc of client.documents.list(project, { ...(folder.id ? { parentObjectIdentifier: folder.id } : {}), hidePackagedFiles: false, includePath: true })) {
      // Without a parent the service answers the root's children; anything else it sends is not in this folder.
      if ((doc.parentObjectIdentifier ?? null) !== folder.id) continue;
      out.document(doc, pathOf(doc, folder.path));
    }
    return;
  }
  const prefix = folder.path === '' ? '/' : `${folder.path}/`;
  for await (const doc of client.documents.list(project, { flattenList: true, includePath: true, hidePackagedFiles: false })) {
    const path = pathOf(doc, undefined);
    if (path.startsWith(prefix)) out.document(doc, path);
  }
}

/**
 * The project `where` starts with: an id, or a name (which may hold a `/`: the longest start of
 * `where` that names a project is taken), and the path after it.
 */
async function projectOf(client: FerryClient, where: string): Promise<{ project: string; rest: string }> {
  const slash = where.indexOf('/');
  const first = slash < 0 ? where : where.slice(0, slash);
  if (isUuid(first)) return { project: uuidFlag('PROJECT', first), rest: slash < 0 ? '' : where.slice(slash + 1) };
  const names = new Set<string>();
  for await (const p of client.projects.list()) if (p.name && where.startsWith(p.name) && (where.length === p.name.length || where[p.name.length] === '/')) names.add(p.name);
  const longest = [...names].sort((a, b) => b.length - a.length)[0];
  // The name resolved as --project resolves it (two projects of one name: exit 2 naming both ids).
  const name = longest ?? first;
  const project = await resolveProject(client, name, 'PROJECT').catch((err: unknown) => {
    throw err instanceof ConfigurationError ? new ConfigurationError(`PROJECT: ${err.message}`) : err;
  });
  return { project, rest: where.slice(name.length + 1) };
}

/** The folder a path names, walked from the root one listing per level; or the document it names. */
async function resolveFolder(client: FerryClient, project: string, segments: string[]): Promise<{ id: string | null; path: string; document?: Document }> {
  let id: string | null = null;
  let path = '';
  for (const [i, segment] of segments.entries()) {
    let found: Document | undefined;
    for await (const doc of client.documents.list(project, { ...(id ? { parentObjectIdentifier: id } : {}), hidePackagedFiles: false })) {
      if ((doc.parentObjectIdentifier ?? null) === id && doc.name === segment && (doc.isDirectory || !found)) {
        found = doc;
        if (doc.isDirectory) break;
      }
    }
    if (!found) throw new FerryError(`no folder or document ${visible(`/${segments.slice(0, i + 1).join('/')}`)} in project ${project}`);
    if (!found.isDirectory) {
      if (i < segments.length - 1) throw new FerryError(`${visible(`/${segments.slice(0, i + 1).join('/')}`)} in project ${project} is a document, not a folder`);
      return { id, path, document: found };
    }
    id = found.objectIdentifier ?? null;
    path = `${path}/${segment}`;
  }
  return { id, path };
}

function pathOf(doc: Document, folderPath: string | undefined): string {
  if (folderPath !== undefined) return `${folderPath}/${doc.name ?? ''}`;
  return logicalPath(doc) ?? `/${doc.name ?? ''}`;
}

function day(date: string | null | undefined): string {
  return date ? date.slice(0, 19).replace('T', ' ') : '-'.padEnd(19);
}

/**
 * Where the entries go: a line each, or the items of one JSON object. A project's documents are
 * written sorted by path, a folder just before its contents (the service's order is by date, and
 * a flattened listing may give a folder after its files), sorted on disk as they come.
 */
class Listing {
  private count = 0;
  private bytes = 0;
  private readonly items: JsonItems | undefined;
  private sorter: SpillSort<{ json: Record<string, unknown>; text: string }> | undefined;

  constructor(
    private readonly reply: Reply,
    private readonly command: string,
    private readonly where: string,
    private readonly target: string,
    /** --long: each document's metadata in the text too. */
    private readonly long = false,
  ) {
    this.items = reply.listing({ where, target });
  }

  document(doc: Document, path: string): void {
    const dir = doc.isDirectory === true;
    const size = dir ? null : (doc.size ?? null);
    const refused = dir ? undefined : refusalOf(doc);
    const metadata = dir ? null : Object.fromEntries((doc.metadata ?? []).filter((m) => m.key).map((m) => [m.key as string, m.value ?? '']));
    // In text, the document's own keys (ferry's identity keys are in --json).
    const own = metadata ? Object.entries(metadata).filter(([k]) => !OWN_METADATA.test(k)) : [];
    const shown = this.long && own.length ? `  ${own.map(([k, v]) => `${visible(k)}=${visible(v.length > 60 ? `${v.slice(0, 59)}…` : v)}`).join('; ')}` : '';
    if (size !== null) this.bytes += size;
    this.sorter ??= new SpillSort();
    this.sorter.add(
      pathSortKey(path),
      {
        // A document processing refused is marked, with its reason: there, but not indexed.
        json: { path, name: doc.name ?? null, id: doc.objectIdentifier ?? null, isDirectory: dir, size, dateAdded: doc.dateAdded ?? null, contentType: dir ? null : (doc.contentType ?? null), refused: refused ?? null, metadata },
        text: `${(dir ? '-' : String(size ?? '?')).padStart(12)}  ${day(doc.dateAdded)}  ${visible(path)}${dir ? '/' : ''}${refused ? `  [refused: ${refused}]` : ''}${shown}`,
      },
      doc.dateAdded ?? '',
    );
  }

  /** Writes the documents gathered so far, in order. */
  private drain(): void {
    if (!this.sorter) return;
    try {
      for (const { json, text } of this.sorter.sorted()) this.item(json, text);
    } finally {
      this.sorter.close();
      this.sorter = undefined;
    }
  }

  item(json: Record<string, unknown>, text: string): void {
    if (this.items) this.items.item(json);
    else this.reply.text(text);
    this.count++;
  }

  end(exitCode: number, error?: string): void {
    this.drain();
    process.exitCode = exitCode;
    if (this.items) {
      this.items.end(error ? 'failed' : 'succeeded', exitCode, { count: this.count, bytes: this.bytes, ...(error ? { error } : {}) });
      return;
    }
    if (this.count === 0 && exitCode === EXIT.ok) process.stderr.write(`nothing ${this.command === 'ls' ? `at ${this.where ? visible(this.where) : 'the top level'}` : 'found'} (${this.target})\n`);
  }
}
