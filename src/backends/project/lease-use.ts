// How a job takes its lease on the service: the target it names (a project's folder, work on the
// tenant), the settings the command line and job files give, and the lease taken on a board of
// projects (./lease-board.ts) before the run's first write.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { FerryClient } from '../../api/client.js';
import { NotFoundError, PermissionDeniedError } from '../../api/errors.js';
import { describeTarget } from '../../api/target.js';
import { acquireLease, LeaseError, leaseTtlFor, type LeaseEvent } from '../../runner/lease.js';
import type { LeaseUse } from '../../runner/job.js';
import { noSuchProject, noteVerified, unreachable } from './source.js';
import { ProjectLeaseBoard } from './lease-board.js';

/** How a job uses its lease, as the command line and job files say it. */
export interface LeaseSettings {
  /** No lease at all, and the setting that said so as its reader names it (`--no-lock`, a job file's `lock`): said in the summary. */
  off?: string | undefined;
  /** `--wait-lock`: how long to wait for a held lease (default: not at all). */
  waitMs?: number | undefined;
  /** `--lock-ttl`: how long a lease lives past its last renewal (default 30 s). */
  ttlMs?: number | undefined;
  /** Who hears what the lease does as it happens (the CLI says a wait and a loss at once). */
  onEvent?: ((event: LeaseEvent) => void) | undefined;
  /** How whoever is refused is told to break the lease, in the caller's words (the CLI names its command). */
  breakHint?: ((target: { project?: string | undefined; path: string }) => string) | undefined;
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
}

/** The lease a job's run takes on the service (runner/job's LeaseUse), or none under --no-lock. */
export function serviceLease(client: FerryClient, target: LeaseTarget, settings: LeaseSettings = {}): LeaseUse {
  const listingLag = client.transport.listingLag;
  if (settings.off) return { off: settings.off, listingLag };
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
        ...(settings.breakHint ? { breakHint: settings.breakHint({ project: target.project, path: target.path }) } : {}),
        ttlMs,
        ...(settings.waitMs !== undefined ? { waitMs: settings.waitMs } : {}),
        onEvent: settings.onEvent,
        lag: client.transport.listingLag,
      }).catch((err: unknown) => {
        // The lease's first record is the run's first write: refused, the client may only read.
        if (err instanceof PermissionDeniedError && board.writes === 1) {
          throw new LeaseError(target.description, { code: 'denied', writesDenied: true, said: `this client may read but not write (${describeTarget(client.target)}): the service refused ferry's first write (${err.status}), and nothing was written; use a profile whose application may write` });
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
      throw new LeaseError(`project ${project}`, { code: 'denied', said: noSuchProject(client, project, err) });
    }
    // Unreachable, refused: the run is recorded and says so, as before.
    return;
  }
  noteVerified(client, project);
}

/** The lease target of a project and a folder in it (mirror, upload, a migration's target). */
export function projectLeaseTarget(project: string, path: string, job: string): LeaseTarget {
  return {
    scope: `project:${project}`,
    project,
    path,
    job,
    description: `project ${project}${path ? `, folder ${path}` : ''}`,
  };
}

/**
 * The lease target of work on the tenant as a whole (a migration into it, a playbook import, a
 * backup of its playbooks): scope `tenant`, paths naming the work (`migrate/<source host>`,
 * `playbook/<id>`, `backup/<folder>`), which conflict as folders do.
 */
export function tenantLeaseTarget(path: string, job: string, description: string): LeaseTarget {
  return { scope: 'tenant', path, job, description };
}
