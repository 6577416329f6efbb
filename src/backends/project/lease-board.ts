// Where the lease records live on the service: as projects. Of everything the interface offers, a
// project is what can be created by any writer of the tenant, listed by all of them (searched by
// name), removed again (DELETE /projects/{id}) and carries a time the service assigns
// (`dateAdded`); documents cannot be removed, options carry no time, and a playbook cannot be
// deleted at all. A lease record is a project named `.ferry-lease <scope hash>` whose description
// is the record's body as JSON; it holds no documents. Every command that lists projects leaves
// them out (isLeaseRecord), and the protocol removes them: a clean run leaves none behind.
import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { FerryClient } from '../../api/client.js';
import { NotFoundError, PermissionDeniedError } from '../../api/errors.js';
import { describeTarget } from '../../api/target.js';
import type { Project } from '../../api/types.js';
import { LEASE_RECORD_PREFIX } from '../../api/resources/projects.js';
import { acquireLease, DEFAULT_LEASE_TTL_MS, LeaseError, MAX_LEASE_TTL_MS, type LeaseBoard, type LeaseBody, type LeaseRecord } from '../../runner/lease.js';
import { ConfigurationError } from '../../errors.js';
import { formatLag } from '../../api/listing-lag.js';
import type { LeaseUse } from '../../runner/job.js';
import { noSuchProject, noteVerified, unreachable } from './source.js';
import { writeStderr } from '../../runner/terminal.js';
import { safeText } from '../names.js';

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
    throw new LeaseError(`the service gave a lease record (${project.objectIdentifier}) no readable dateAdded ("${String(project.dateAdded)}"): a lease is decided by the service's order and time, and cannot be here (--no-lock runs without one)`);
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

/** How a job uses its lease, as the command line and job files say it. */
export interface LeaseSettings {
  /** `--no-lock`: no lease at all (said in the summary). */
  off?: boolean | undefined;
  /** `--wait-lock`: how long to wait for a held lease (default: not at all). */
  waitMs?: number | undefined;
  /** `--lock-ttl`: how long a lease lives past its last renewal (default 30 s). */
  ttlMs?: number | undefined;
}

/** What a job asks a lease on: a scope of the service (a project…) and a path within it. */
export interface LeaseTarget {
  scope: string;
  /** The project the work writes to, checked before the lease is taken. */
  project?: string;
  path: string;
  job: string;
  /** For messages: what the lease is on. */
  description: string;
  /** The command that breaks it (said to whoever is refused). */
  breakHint: string;
}

/** The lease a job's run takes on the service (runner/job's LeaseUse), or none under --no-lock. */
export function serviceLease(client: FerryClient, target: LeaseTarget, settings: LeaseSettings = {}): LeaseUse {
  const listingLag = client.transport.listingLag;
  if (settings.off) return { off: '--no-lock', listingLag };
  const ttlMs = leaseTtlFor(settings.ttlMs, listingLag.boundMs);
  return {
    listingLag,
    acquire: async (lock) => {
      // A project that is not there is said before a lease is taken, with where to look.
      if (target.project) await checkProject(client, target.project);
      const board = new ProjectLeaseBoard(client, target.scope);
      // Writes of the run's own, beyond the lease's: counted on the wire (retries too, which only ever say "wrote").
      const before = client.transport.writesSent;
      return acquireLease({
        board,
        wroteOwn: () => client.transport.writesSent - before > board.writes,
        description: target.description,
        path: target.path,
        // The store lock's token: the next run of this store, finding this process dead, knows
        // this lease is dead too and need not wait out its TTL.
        owner: lock?.token ?? randomUUID(),
        ...(lock?.replaced ? { deadOwners: lock.replaced } : {}),
        host: hostname(),
        pid: process.pid,
        job: target.job,
        breakHint: target.breakHint,
        ttlMs,
        ...(settings.waitMs !== undefined ? { waitMs: settings.waitMs } : {}),
        onEvent: sayOnStderr(),
        lag: client.transport.listingLag,
      }).catch((err: unknown) => {
        // The lease's first record is the run's first write: refused, the client may only read.
        if (err instanceof PermissionDeniedError && board.writes === 1) {
          throw new LeaseError(`this client may read but not write (${describeTarget(client.target)}): the service refused ferry's first write (${err.status}), and nothing was written; use a profile whose application may write (ferry doctor says what a profile may do)`);
        }
        throw unreachable(err) ?? err;
      });
    },
  };
}

/** The target project, asked for by id: not there is a LeaseError (exit 3, no run, no lease) suggesting `ferry ls`. */
async function checkProject(client: FerryClient, project: string): Promise<void> {
  try {
    await client.projects.get(project);
  } catch (err) {
    if (err instanceof NotFoundError) {
      throw new LeaseError(noSuchProject(client, project, err));
    }
    // Unreachable, refused: the run is recorded and says so, as before.
    return;
  }
  noteVerified(client, project);
}

/**
 * The lease's TTL under a listing lag. A claim is held only once the bound has passed since it was
 * made, and the holder must renew within its TTL of the claim, so the TTL must outlast the bound
 * with room for the round trips: at least LAG_TTL_FACTOR times it. Unset, the default grows to
 * that; set shorter, it is refused before anything is attempted (exit 2).
 */
const LAG_TTL_FACTOR = 3;

export function leaseTtlFor(asked: number | undefined, lagMs: number): number {
  const least = LAG_TTL_FACTOR * lagMs;
  if (asked === undefined) return Math.min(MAX_LEASE_TTL_MS, Math.max(DEFAULT_LEASE_TTL_MS, least));
  if (asked < least) {
    throw new ConfigurationError(
      `--lock-ttl ${formatLag(asked)} is too short for --listing-lag ${formatLag(lagMs)}: a lease is held only once the listing lag has passed since its claim, and must be renewed within its TTL; give a TTL of at least ${LAG_TTL_FACTOR} times the lag (${formatLag(least)}), or leave --lock-ttl out`,
    );
  }
  return asked;
}

/** The lease target of a project and a folder in it (mirror, upload, a migration's target). */
export function projectLeaseTarget(project: string, path: string, job: string): LeaseTarget {
  return {
    scope: `project:${project}`,
    project,
    path,
    job,
    description: `project ${project}${path ? `, folder ${path}` : ''}`,
    breakHint: `ferry lock break --project ${project}${path ? ` --path '${path.replace(/'/g, "'\\''")}'` : ''}`,
  };
}

/**
 * The lease target of work on the tenant as a whole (a migration into it, a playbook import, a
 * backup of its playbooks): scope `tenant`, paths naming the work (`migrate/<source host>`,
 * `playbook/<id>`, `backup/<folder>`), which conflict as folders do.
 */
export function tenantLeaseTarget(path: string, job: string, description: string): LeaseTarget {
  return { scope: 'tenant', path, job, description, breakHint: `ferry lock break --path '${path.replace(/'/g, "'\\''")}'` };
}

/** What the operator should hear at once, not only in the summary: a wait begun, a lease lost. */
function sayOnStderr(): (event: string, detail?: Record<string, unknown>) => void {
  let waiting = false;
  return (event, detail) => {
    if (event === 'lost' || event === 'lagged') writeStderr(`ferry: ${safeText(String(detail?.message ?? 'the lease was lost'))}\n`);
    if (event === 'waiting' && !waiting) {
      waiting = true;
      writeStderr(`ferry: another run holds the lease (${safeText(String(detail?.holder ?? ''))}): waiting for it (--wait-lock)\n`);
    }
  };
}
