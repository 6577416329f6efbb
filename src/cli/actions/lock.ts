// `ferry lock status|break`: the lease records of a project, read and removed through the same
// board the runs use (src/backends/project/lease-board.ts). Breaking is never silent: what was
// removed is named, with a warning that a live holder may still write until its next renewal.
import type { Command } from 'commander';
import { ProjectLeaseBoard } from '../../backends/project/lease-board.js';
import { projectLeaseTarget, tenantLeaseTarget } from '../../backends/project/lease-use.js';
import { normaliseRemotePath } from '../../../jobs/mirror.js';
import { leaseEntries, pathsConflict, type LeaseEntry } from '../../runner/lease.js';
import { safeText, visible } from '../../text.js';
import { describeTarget } from '../../api/target.js';
import { createContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { Reply } from '../reply.js';
import { projectFlag, resolveProject } from '../../backends/project/named.js';
import type { FerryClient } from '../../api/client.js';

interface LockOptions {
  project?: string;
  path?: string;
  json?: boolean;
}

/** A project's leases, or the tenant-wide ones; and how they are named in messages. */
async function scopeOf(opts: LockOptions, client: FerryClient): Promise<{ scope: string; project?: string; named: string }> {
  if (opts.project === undefined) return { scope: tenantLeaseTarget('', 'lock', '').scope, named: 'the tenant (migrations, playbook imports, backups)' };
  const project = await resolveProject(client, projectFlag('--project', opts.project));
  return { scope: projectLeaseTarget(project, '', 'lock').scope, project, named: `project ${project}` };
}

export async function lockStatusAction(opts: LockOptions, cmd: Command): Promise<void> {
  const { client } = createContext(cmd);
  try {
    const { scope, project, named } = await scopeOf(opts, client);
    const board = new ProjectLeaseBoard(client, scope);
    const entries = leaseEntries(await board.list());
    Reply.to(opts).answer('succeeded', EXIT.ok, { ...(project ? { project } : {}), target: client.target, records: entries.reduce((n, e) => n + e.records.length, 0), holders: entries.filter((e) => e.holder).map((e) => e.holder) }, () => {
      const lines = [`leases on ${named} (${describeTarget(client.target)}):`];
      if (entries.length === 0) lines.push('  none: no run holds or waits for a lease here');
      for (const e of entries) lines.push(`  ${describe(e)}`);
      return lines.join('\n');
    });
    process.exitCode = EXIT.ok;
  } finally {
    await client.close();
  }
}

export async function lockBreakAction(opts: LockOptions, cmd: Command): Promise<void> {
  const path = opts.path === undefined ? undefined : normaliseRemotePath(opts.path);
  const { client } = createContext(cmd);
  try {
    const { scope, project, named } = await scopeOf(opts, client);
    const board = new ProjectLeaseBoard(client, scope);
    const entries = leaseEntries(await board.list()).filter((e) => path === undefined || !e.holder || pathsConflict(e.holder.path, path));
    for (const e of entries) for (const id of e.records) await board.remove(id);
    const broken = entries.filter((e) => e.holder).map((e) => e.holder);
    const longest = Math.max(0, ...broken.map((h) => h?.ttlMs ?? 0));
    const warning = broken.length
      ? `warning: broke ${broken.length} lease${broken.length === 1 ? '' : 's'} on ${named}${path !== undefined ? ` conflicting with folder "${path}"` : ''}; a holder that is still running notices at its next renewal and stops, but may write for up to ${Math.round(longest / 2000)} s more: runs started now may write beside it`
      : `nothing to break: no lease on ${named}${path !== undefined ? ` conflicting with folder "${path}"` : ''}`;
    process.stderr.write(`ferry: ${safeText(warning)}\n`);
    for (const e of entries) process.stderr.write(`  removed: ${describe(e)}\n`);
    // What was done is said on stderr above; under --json the answer carries it too.
    Reply.to(opts).answer('succeeded', EXIT.ok, { ...(project ? { project } : {}), target: client.target, ...(path !== undefined ? { path } : {}), removed: entries.reduce((n, e) => n + e.records.length, 0), broken, warning }, () => undefined);
    process.exitCode = EXIT.ok;
  } finally {
    await client.close();
  }
}

function describe(e: LeaseEntry): string {
  const h = e.holder;
  if (!h) return `${e.records.length} renewal record${e.records.length === 1 ? '' : 's'} whose claim is gone (${e.records.join(', ')})`;
  return `${visible(h.job)} run ${visible(h.run)} on host ${visible(h.host)} (pid ${h.pid}), folder "${visible(h.path)}", since ${h.since}, last renewed ${h.renewed}, TTL ${Math.round(h.ttlMs / 1000)} s${h.note ? ` (${safeText(h.note)})` : ''}`;
}
