// Where the lease records live on the service: as projects. Of everything the interface offers, a
// project is what can be created by any writer of the tenant, listed by all of them (searched by
// name), removed again (DELETE /projects/{id}) and carries a time the service assigns
// (`dateAdded`); documents cannot be removed, options carry no time, and a playbook cannot be
// deleted at all. A lease record is a project named `.ferry-lease <scope hash>` whose description
// is the record's body as JSON; it holds no documents. Every command that lists projects leaves
// them out (isLeaseRecord), and the protocol removes them: a clean run leaves none behind.
//
// This file keeps only the service: how a job takes its lease is ./lease-use.ts, the TTL policy
// src/runner/lease/ttl.ts, the words a person reads src/cli/lease-words.ts.
import { createHash } from 'node:crypto';
import type { FerryClient } from '../../api/client.js';
import { NotFoundError } from '../../api/errors.js';
import type { Project } from '../../api/types.js';
import { LEASE_RECORD_PREFIX } from '../../api/resources/projects.js';
import { LeaseError, type LeaseBoard, type LeaseBody, type LeaseRecord } from '../../runner/lease.js';

export { isLeaseRecord } from '../../api/resources/projects.js';

/** The record name of a scope: the scope itself may hold ids and paths, its hash is short and plain. */
export function leaseName(scope: string): string {
  return `${LEASE_RECORD_PREFIX}${createHash('sha256').update(scope).digest('hex').slice(0, 32)}`;
}

/** Reads a record's description: the body, or what version it declares, or nothing. */
export function readLeaseBody(description: string | null | undefined): { body?: LeaseBody; v?: number } {
  if (!description) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(description);
  } catch {
    return {};
  }
  if (!parsed || typeof parsed !== 'object') return {};
  const o = parsed as Record<string, unknown>;
  const v = typeof o.v === 'number' ? o.v : undefined;
  const ok =
    v === 1 &&
    (o.kind === 'claim' || o.kind === 'beat') &&
    typeof o.owner === 'string' && o.owner.length > 0 &&
    typeof o.path === 'string' &&
    typeof o.ttlMs === 'number' && o.ttlMs > 0 && Number.isFinite(o.ttlMs) &&
    typeof o.host === 'string' && typeof o.pid === 'number' && typeof o.job === 'string';
  if (!ok) return v !== undefined ? { v } : {};
  return { body: { v: 1, kind: o.kind as LeaseBody['kind'], owner: o.owner as string, path: o.path as string, ttlMs: o.ttlMs as number, host: o.host as string, pid: o.pid as number, job: o.job as string }, v };
}

/** The service's time of a record, refused when it gives none: the protocol cannot be decided without it. */
function serviceTime(project: Project): number {
  const at = Date.parse(project.dateAdded ?? '');
  if (!Number.isFinite(at)) {
    throw new LeaseError(`a lease record of ${project.name}`, { code: 'undated', record: project.objectIdentifier, value: String(project.dateAdded) });
  }
  return at;
}

export class ProjectLeaseBoard implements LeaseBoard {
  readonly name: string;

  constructor(private readonly client: FerryClient, readonly scope: string) {
    this.name = leaseName(scope);
  }

  /** Write requests this board made (its records' creation and removal), so a run can tell its own writes from the lease's. */
  writes = 0;

  async create(body: LeaseBody): Promise<{ id: string; at: number }> {
    this.writes++;
    const description = JSON.stringify(body);
    const project = await this.client.projects.create(
      { name: this.name, description },
      {
        // An answer lost on the way: the record is looked for before another is made.
        didItLand: async () => (await this.records()).find((p) => p.description === description),
      },
    );
    return { id: project.objectIdentifier, at: serviceTime(project) };
  }

  async list(): Promise<LeaseRecord[]> {
    return (await this.records()).map((p) => {
      const { body, v } = readLeaseBody(p.description);
      return { id: p.objectIdentifier, at: serviceTime(p), body, ...(v !== undefined ? { v } : {}) };
    });
  }

  async exists(id: string): Promise<boolean> {
    try {
      const project = await this.client.projects.get(id);
      return project.name === this.name;
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
  }

  async remove(id: string): Promise<void> {
    this.writes++;
    try {
      await this.client.projects.delete(id);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }

  /** The projects named as this scope's records (the search is by substring; the name is checked whole). */
  private async records(): Promise<Project[]> {
    const out: Project[] = [];
    for await (const p of this.client.projects.list({ searchText: this.name, sorting: 'dateAdded', desc: false }, { pageSize: 100, leaseRecords: true })) {
      if (p.name === this.name) out.push(p);
    }
    return out;
  }
}

