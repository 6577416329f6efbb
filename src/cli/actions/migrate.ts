// `ferry migrate --from P --to P`: projects and playbooks from one tenant into another, planned
// (--dry-run), resumable, verified (--verify, or `ferry migrate verify`).
import type { Command } from 'commander';
import { migrate, planMigration, verifyMigration, type MigrationPlan, type ProjectReport, type VerifyReport } from '../../../jobs/migrate.js';
import type { MigrateRequest } from '../../../jobs/definition.js';
import { DEFAULT_CONCURRENCY } from '../../runner/adaptive.js';
import { ConfigurationError } from '../../api/errors.js';
import { formatBytes, safeText, visible } from '../../text.js';
import { EXIT } from '../exit-codes.js';
import { exitCodeFor, namedCounts, plural } from '../output.js';
import { setCommand } from '../envelope.js';
import { Reply } from '../reply.js';
import { layout } from '../../runner/layout.js';
import { heard, jobFromFlags, lockedOr, openPairDeps, type RunOptions } from '../shared.js';
import { PlanOutput } from '../plan-output.js';
import { shellWord } from '../shell-words.js';

export async function migrateAction(action: string | undefined, opts: Record<string, unknown>, cmd: Command): Promise<void> {
  if (action !== undefined && action !== 'verify') throw new ConfigurationError(`ferry migrate: unknown action "${visible(action)}" (the one action is "verify")`);
  if (action === 'verify' && (opts.dryRun || opts.map)) throw new ConfigurationError('ferry migrate verify takes neither --dry-run nor --map');
  if (opts.manifest !== undefined) throw new ConfigurationError('--manifest means nothing to a migration: each document is copied with its own metadata and settings (mirror, upload and check read a manifest; pull --manifest-out writes one)');
  const dryRun = opts.dryRun === true;
  if (action === 'verify') setCommand('migrate verify');
  if (opts.wait && (dryRun || action === 'verify')) process.stderr.write(`ferry: --wait does nothing with ${action === 'verify' ? 'migrate verify' : '--dry-run'}: nothing is copied, so there is nothing to process\n`);
  const loaded = jobFromFlags('migrate', {}, opts);
  const { waitMs, ...options } = loaded.migrate.options;
  const reply = Reply.to(opts, loaded.statsIntervalMs);
  if (action === 'verify') {
    const deps = openPairDeps(cmd, loaded.migrate.from, loaded.migrate.to, options.concurrency ?? DEFAULT_CONCURRENCY, loaded.state);
    try {
      const report = await verifyMigration(options, { ...deps, display: reply.display });
      process.exitCode = report.differenceCount > 0 ? EXIT.failed : EXIT.ok;
      reply.answer(report.differenceCount > 0 ? 'different' : 'matching', process.exitCode, { ...report }, () => describeVerification(report));
    } finally {
      await deps.close();
    }
    return;
  }
  const request = { ...loaded.migrate, options: heard({ ...options, ...(waitMs !== undefined && !dryRun ? { waitMs } : {}) }) };
  process.exitCode = await runMigrateCommand(cmd, request, { reply, state: loaded.state, dryRun });
}

/** Shared by `migrate` and `run` of a migrate job file: the plan (--dry-run), or the run and its verification. */
export async function runMigrateCommand(cmd: Command, request: MigrateRequest, run: RunOptions): Promise<number> {
  const { options } = request;
  const { reply } = run;
  const deps = { ...openPairDeps(cmd, request.from, request.to, options.concurrency ?? DEFAULT_CONCURRENCY, run.state), display: reply.display };
  const compare = () => verifyMigration(options, deps);
  try {
    if (run.dryRun) {
      const out = new PlanOutput(reply, 'copy', 'gone from the source');
      const plan = await planMigration(options, deps, out.item);
      const code = plan.blockers.length ? EXIT.failed : EXIT.ok;
      out.finish(code, { ...plan }, describePlan(plan), plan.blockers.length > 0);
      return code;
    }
    const summary = await migrate(options, deps);
    let code = exitCodeFor(summary);
    let verification: VerifyReport | undefined;
    if (request.verify && summary.status === 'succeeded') {
      verification = await compare();
      if (verification.differenceCount > 0) code = Math.max(code, EXIT.failed);
    }
    // A migration that succeeded but does not verify has failed, and says so in its status.
    const status = code === EXIT.failed && summary.status === 'succeeded' ? 'failed' : undefined;
    // Each project's document counts are named as the job's are: copied.
    // A project whose processing was waited for names its report, as its text line does.
    const projects = (summary.projects as ProjectReport[] | undefined)?.map((p) => ({
      ...p,
      documents: namedCounts('migrate', p.documents),
      ...(p.processing && p.target ? { report: projectReport(request.to, p.target, summary.uploadIdentifier) } : {}),
    }));
    reply.summary(summary, { reopen: deps.store.reopenFlags, extra: { ...(projects ? { projects } : {}), ...(verification ? { verification } : {}) }, exitCode: code, status });
    reply.text(() => describeMigration(summary, request.to) + (verification ? describeVerification(verification) : ''));
    return code;
  } catch (err) {
    return lockedOr(err, reply);
  } finally {
    await deps.close();
  }
}

function describePlan(plan: MigrationPlan): string {
  const t = plan.totals;
  const lines = [`migration plan, ${visible(plan.from)} -> ${visible(plan.to)} (nothing was changed):`];
  for (const p of plan.projects) {
    lines.push(`  project ${visible(p.name ?? '')} (${p.source})${p.target ? ` -> ${p.target} (made by an earlier run)` : ''}: ${p.folders} folders, ${p.documents} documents, ${formatBytes(p.bytes)}${p.alreadyCopied ? `, ${p.alreadyCopied} already copied` : ''}`);
    for (const n of p.notCarried.slice(0, 10)) lines.push(`    not carried: ${visible(n.key)}: ${safeText(n.reason)}`);
    if (p.notCarriedCount > 10) lines.push(`    … ${p.notCarriedCount - 10} more not carried (see --json)`);
  }
  for (const p of plan.playbooks) lines.push(`  playbook ${visible(p.name ?? '')} (${p.source})${p.target ? ` -> ${p.target} (made by an earlier run)` : ''}`);
  lines.push(`  organization metadata: ${plan.options.definitions} definitions, ${plan.options.options} options, ${plan.options.missingOnTarget} to create on the target`);
  for (const b of plan.blockers) lines.push(`  BLOCKED: ${safeText(b)}`);
  lines.push(`  totals: ${t.projects} projects, ${t.folders} folders, ${t.documents} documents (${formatBytes(t.bytes)}; ${t.alreadyCopied} already copied), ${t.playbooks} playbooks, ${t.notCarried} documents not carried`);
  lines.push('  never carried:');
  for (const n of plan.notCarried) lines.push(`    ${n.what}: ${n.why}`);
  return `${layout(lines.join('\n'))}\n`;
}

function describeMigration(summary: Record<string, unknown>, toProfile: string): string {
  const lines: string[] = [];
  const options = summary.options as { definitions: number; options: number; created: number } | undefined;
  if (options) lines.push(`  organization metadata: ${options.definitions} definitions, ${options.options} options (${options.created} created on the target)`);
  for (const p of (summary.projects as ProjectReport[] | undefined) ?? []) {
    const d = p.documents;
    lines.push(`  project ${visible(p.name ?? '')} ${p.source} -> ${p.target ?? '(none)'} (${p.outcome}): ${d.uploaded} documents copied, ${d.reconciled} found, ${d.unchanged ?? 0} unchanged, ${d.skipped} skipped, ${d.failed} failed, ${formatBytes(p.bytes)}`);
    // What the target's processing did with this project's copies (--wait), and how to see it whole.
    const w = p.processing;
    if (w && p.target) {
      const reasons = Object.entries(w.failedReasonSummary).map(([r, n]) => `${r} ${n}`).join(', ');
      lines.push(`    processed on the target: ${w.completed} indexed, ${w.refused} refused${reasons ? ` (${reasons})` : ''}${w.processing ? `, ${w.processing} still processing` : ''}; \`${projectReport(toProfile, p.target, summary.uploadIdentifier)}\``);
    }
  }
  for (const p of (summary.playbooks as { source: string; target: string | null; name: string | null; outcome: string }[] | undefined) ?? []) {
    lines.push(`  playbook ${visible(p.name ?? '')} ${p.source} -> ${p.target ?? '(none)'} (${p.outcome})`);
  }
  return lines.length ? `${layout(lines.join('\n'))}\n` : '';
}

/** The report of one target project's copies: its batch is the migration's upload identifier. */
function projectReport(toProfile: string, target: string, upload: unknown): string {
  return `ferry -p ${shellWord(toProfile)} report --project ${target} --upload ${String(upload ?? '')}`;
}

function describeVerification(r: VerifyReport): string {
  const c = r.counts;
  const lines = [`verify ${visible(r.from)} -> ${visible(r.to)}: ${plural(c.projects, 'project', 'projects')}, ${plural(c.folders, 'folder', 'folders')}, ${plural(c.documents, 'document', 'documents')} (${formatBytes(c.bytesHashed)} hashed), ${plural(c.playbooks, 'playbook', 'playbooks')} compared: ${plural(r.differenceCount, 'difference', 'differences')}`];
  for (const d of r.differences.slice(0, 50)) lines.push(`  ${d.kind} ${d.where}: ${d.what}`);
  if (r.differenceCount > 50) lines.push(`  … ${r.differenceCount - 50} more (see --json)`);
  return `${layout(lines.join('\n'))}\n`;
}
