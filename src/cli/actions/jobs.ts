// `ferry jobs list|show|resume`: what ran, how it ended, and picking up where a run stopped.
import { Reply } from '../reply.js';
import type { Command } from 'commander';
import { ConfigurationError } from '../../api/errors.js';
import { formatBytes, safeText } from '../../text.js';
import { resolveSettings } from '../../config/profile.js';
import { defaultStorePath, openStore } from '../../store/index.js';
import type { RunRecord } from '../../store/types.js';
import { globalOptions } from '../context.js';
import { runMirrorCommand } from './mirror.js';
import { runUploadCommand } from './upload.js';
import { runMigrateCommand } from './migrate.js';
import { definitionFromRecord } from '../../../jobs/definition.js';
import { formOfRecord } from '../../settings/resume.js';
import { RESUMABLE_JOBS, type JobKind } from '../../settings/declared.js';
import { heard } from '../shared.js';
import { EXIT } from '../exit-codes.js';
import { namedCounts, writtenVerb } from '../output.js';

export async function listAction(opts: { job?: string; limit: string; state?: string; json?: boolean }, cmd: Command): Promise<void> {
  withStore(cmd, opts.state, (store) => {
    const runs = store.listRuns({ ...(opts.job ? { job: opts.job } : {}), limit: Number(opts.limit) || 20 });
    const reply = Reply.to(opts);
    const out = reply.listing({});
    if (out) {
      for (const r of runs) out.item(runJson(r));
      return void out.end('succeeded', EXIT.ok, { count: runs.length });
    }
    reply.text(runs.length === 0 ? 'no runs recorded yet' : runs.map(line).join('\n'));
  });
}

export async function showAction(runArg: string, opts: { state?: string; json?: boolean }, cmd: Command): Promise<void> {
  withStore(cmd, opts.state, (store) => {
    const run = store.getRun(runId(runArg));
    if (!run) throw new ConfigurationError(`no run ${runArg} in this checkpoint store`);
    Reply.to(opts).answer('succeeded', EXIT.ok, { run: runJson(run) }, () => [`${line(run)}`, `  parameters: ${JSON.stringify(run.params)}`, `  batch: ${run.uploadId ?? '-'}`, ...run.errors.map((e) => `  problem: ${safeText(e)}`)].join('\n'));
  });
}

/** The kinds of run `ferry jobs resume` continues: those that record their settings (src/settings/resume.ts). */

export async function resumeAction(runArg: string, opts: { state?: string; json?: boolean }, cmd: Command): Promise<void> {
  const id = runId(runArg);
  const run = withStore(cmd, opts.state, (store) => store.getRun(id));
  if (!run) throw new ConfigurationError(`no run ${runArg} in this checkpoint store`);
  if (!(RESUMABLE_JOBS as readonly string[]).includes(run.job)) throw new ConfigurationError(`run ${id} is a ${run.job} run, which cannot be resumed`);
  if (run.status === 'succeeded') throw new ConfigurationError(`run ${id} already succeeded; run the job again instead to pick up changes`);
  const kind = run.job as JobKind;
  const loaded = definitionFromRecord(kind, id, formOfRecord(kind, id, run.params));
  // The run goes on in the store it was read from; `only` (a retry batch's files) is read back by the job itself.
  const how = { rps: loaded.rps, state: opts.state, reply: Reply.to(opts) };
  switch (loaded.kind) {
    case 'upload':
      process.exitCode = await runUploadCommand(cmd, heard({ ...loaded.upload, resumeRunId: id }), { ...how, ack: loaded.ack });
      return;
    case 'mirror':
      process.exitCode = await runMirrorCommand(cmd, heard({ ...loaded.mirror, resumeRunId: id }), how);
      return;
    case 'migrate':
      process.exitCode = await runMigrateCommand(cmd, { ...loaded.migrate, options: heard({ ...loaded.migrate.options, resumeRunId: id }) }, how);
      return;
    default:
      throw new ConfigurationError(`run ${id} is a ${run.job} run, which cannot be resumed`);
  }
}


function withStore<T>(cmd: Command, state: string | undefined, fn: (store: ReturnType<typeof openStore>) => T): T {
  const g = globalOptions(cmd);
  const path = state ?? defaultStorePath(g.profile ?? process.env.FERRY_PROFILE ?? safeProfileName(g));
  const store = openStore(path);
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

/** The default profile's name, without requiring credentials just to read local state. */
function safeProfileName(g: { profile?: string; config?: string }): string | undefined {
  try {
    return resolveSettings({ profile: g.profile, configFile: g.config }).profileName;
  } catch {
    return undefined;
  }
}

function runId(arg: string): number {
  const n = Number(arg);
  if (!Number.isInteger(n) || n < 1) throw new ConfigurationError(`run id must be a positive whole number, not "${arg}"`);
  return n;
}

/** A run as --json shows it: its counts named for what its job did (as summaries name them). */
function runJson(r: RunRecord): Record<string, unknown> {
  return { ...r, counts: namedCounts(r.job, r.counts) };
}

function line(r: RunRecord): string {
  const c = r.counts;
  return `${String(r.id).padStart(5)}  ${r.job.padEnd(8)} ${r.status.padEnd(11)} ${r.startedAt}  ${writtenVerb(r.job)} ${c.uploaded} unchanged ${c.unchanged ?? 0} skipped ${c.skipped} failed ${c.failed} reconciled ${c.reconciled}  ${formatBytes(r.bytes)}`;
}
