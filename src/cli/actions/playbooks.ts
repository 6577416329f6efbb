// `ferry playbooks export|import|backup|verify`: playbooks as archives (docs/playbook-archive.md).
import type { Target } from '../../api/target.js';
import type { Command } from 'commander';
import { ConfigurationError } from '../../api/errors.js';
import { formatBytes, formatDuration, safeText, visible } from '../../text.js';
import type { JobSummary } from '../../runner/job.js';
import { ImportTimeoutError } from '../../playbooks/server-import.js';
import { loadMapping } from '../../playbooks/mapping.js';
import { backupPlaybooks, exportPlaybooks, importArchive, newestGoodBackups, verifyArchives, type BackupOptions } from '../../../jobs/playbooks.js';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { EXIT } from '../exit-codes.js';
import { exitCodeFor, plural, summaryBody, targetLine, writtenVerb } from '../output.js';
import { Reply } from '../reply.js';
import type { RunOptions } from '../options.js';
import { layout } from '../../runner/layout.js';
import { heard, jobFromFlags, lockedOr, openJobDeps } from '../shared.js';
import { leaseSettingsFrom, parseDurationFlag } from '../options.js';

export async function exportAction(ids: string[], opts: { all?: boolean; out: string; state?: string; json?: boolean }, cmd: Command): Promise<void> {
  if (opts.all && ids.length) throw new ConfigurationError('give playbook ids or --all, not both');
  if (!opts.all && ids.length === 0) throw new ConfigurationError('name the playbooks to export (ids or names) or use --all');
  const reply = Reply.to(opts);
  process.exitCode = await runJobCommand(cmd, { state: opts.state, reply }, (deps) =>
    exportPlaybooks({ ids, all: opts.all === true, out: opts.out, onDone: live(reply, (r) => `exported ${visible(r.name ?? '')} -> ${r.path}`) }, deps),
  );
}

export async function importAction(file: string, opts: { mode: 'server' | 'replay'; toProfile?: string; map?: string; timeout: string; state?: string; json?: boolean; waitLock?: string; lockTtl?: string; lock?: boolean }, cmd: Command): Promise<void> {
  if (opts.map && opts.mode !== 'replay') throw new ConfigurationError('--map applies to --mode replay');
  const mapping = opts.map ? loadMapping(opts.map) : undefined;
  const timeoutMs = parseDurationFlag('--timeout', opts.timeout);
  const lock = leaseSettingsFrom(opts);
  const folder = (await stat(file).catch(() => undefined))?.isDirectory() === true;
  if (folder) {
    process.exitCode = await restoreFolder(cmd, file, { ...opts, profile: opts.toProfile }, (archive, deps) => importArchive({ file: archive, mode: opts.mode, mapping, timeoutMs, lock }, deps));
    return;
  }
  process.exitCode = await runJobCommand(cmd, { state: opts.state, profile: opts.toProfile, reply: Reply.to(opts) }, (deps) => importArchive({ file, mode: opts.mode, mapping, timeoutMs, lock }, deps));
}

/**
 * `playbooks import BACKUP_FOLDER`: each playbook the backup folder holds, from its newest whole
 * archive (newer damaged ones passed over and named), one import after the other; a playbook
 * with no whole archive fails with why. Exit: the worst of the imports.
 */
async function restoreFolder(cmd: Command, folder: string, opts: { state?: string | undefined; json?: boolean | undefined; profile?: string | undefined }, job: (archive: string, deps: Deps) => Promise<JobSummary>): Promise<number> {
  const reply = Reply.to(opts);
  const choices = await newestGoodBackups(folder);
  const deps = openJobDeps(cmd, 1, { state: opts.state, profile: opts.profile });
  const restored: Record<string, unknown>[] = [];
  let code: number = EXIT.ok;
  try {
    for (const choice of choices) {
      const said = { playbookIdentifier: choice.playbookIdentifier, name: choice.name, passedOver: choice.passedOver };
      if (!choice.file) {
        const error = `no backup of playbook ${choice.playbookIdentifier} in ${folder} is whole: ${choice.passedOver.map((p) => `${p.file} (${p.why})`).join('; ')}`;
        restored.push({ ...said, error });
        reply.text(() => layout(`restore ${visible(choice.name ?? '')} (${choice.playbookIdentifier}): FAILED: ${safeText(error)}`));
        code = Math.max(code, EXIT.failed);
        continue;
      }
      let summary: JobSummary;
      try {
        summary = await job(choice.file, deps);
      } catch (err) {
        if (!(err instanceof ImportTimeoutError)) return lockedOr(err, reply);
        restored.push({ ...said, archive: choice.file, error: err.message });
        if (!reply.json) process.stderr.write(`ferry: ${safeText(err.message)}\n`);
        code = Math.max(code, EXIT.timeout);
        continue;
      }
      restored.push({ ...said, archive: choice.file, exportedAt: choice.exportedAt, run: summaryBody(summary) });
      code = Math.max(code, exitCodeFor(summary));
      const passed = choice.passedOver.length ? `; newer, not whole: ${choice.passedOver.map((p) => `${visible(p.file)} (${safeText(p.why)})`).join(', ')}` : '';
      const file = choice.file;
      reply.text(() => `${layout(`restore ${visible(choice.name ?? '')} (${choice.playbookIdentifier}) from ${visible(file)}, exported ${choice.exportedAt}${passed}`)}\n${playbookSummaryText(summary)}`);
    }
    const failed = restored.filter((r) => r.error !== undefined || (r.run as { status?: string } | undefined)?.status !== 'succeeded').length;
    reply.answer(
      code === EXIT.ok ? 'succeeded' : code === EXIT.timeout ? 'timeout' : 'failed',
      code,
      { folder: resolve(folder), counts: { playbooks: choices.length, restored: choices.length - failed, failed }, restored, target: deps.client.target },
      () => `restored ${choices.length - failed} of ${plural(choices.length, 'playbook', 'playbooks')} from ${visible(resolve(folder))}${failed ? `; ${failed} not (above, each with why)` : ''}`,
    );
    return code;
  } finally {
    await deps.close();
  }
}

export async function backupAction(opts: Record<string, unknown>, cmd: Command): Promise<void> {
  const loaded = jobFromFlags('playbooks-backup', {}, opts);
  process.exitCode = await runBackupCommand(cmd, heard(loaded.backup), { state: loaded.state, rps: loaded.rps, reply: Reply.to(opts) });
}

/** Shared by `playbooks backup` and `run` of a playbooks-backup job file. */
export async function runBackupCommand(cmd: Command, options: BackupOptions, run: Omit<RunOptions, 'dryRun'>): Promise<number> {
  return runJobCommand(cmd, run, (deps) => backupPlaybooks({ ...options, onDone: live(run.reply, (id, outcome) => `${outcome} ${id}`) }, deps));
}

export async function verifyAction(path: string, opts: { json?: boolean }): Promise<void> {
  const outcomes = await verifyArchives(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code) throw new ConfigurationError(`${path} cannot be read: ${err.code}`);
    throw err;
  });
  const bad = outcomes.filter((o) => !o.ok);
  const quarantined = outcomes.filter((o) => o.quarantined);
  const checked = outcomes.length - quarantined.length;
  Reply.to(opts).answer(bad.length ? 'failed' : 'succeeded', bad.length ? EXIT.failed : EXIT.ok, { counts: { checked, bad: bad.length, quarantined: quarantined.length }, archives: outcomes }, () => {
    const lines = outcomes.map((o) =>
      o.quarantined
        ? `QUAR  ${visible(o.path)}: moved aside on ${o.quarantined.at} (was ${visible(o.quarantined.was)}: ${safeText(o.quarantined.why)}); a newer backup replaced it`
        : // An error that names the archive already is said once after its path, not twice.
          o.ok
          ? `ok    ${visible(o.path)} (${visible(o.playbook?.name ?? '')}, ${plural(o.entries ?? 0, 'entry', 'entries')})`
          : `BAD   ${visible(o.path)}: ${safeText((o.error ?? '').replace(`${o.path}: `, ''))}`,
    );
    lines.push(`${plural(checked, 'archive', 'archives')} checked, ${bad.length} bad${quarantined.length ? `, ${quarantined.length} quarantined (kept, not counted as bad)` : ''}`);
    return lines.join('\n');
  });
  process.exitCode = bad.length ? EXIT.failed : EXIT.ok;
}


type Deps = Parameters<typeof exportPlaybooks>[1];

/** Opens client and store, runs the job, prints its summary; the lock and timeouts get their exit codes. */
async function runJobCommand(cmd: Command, run: Omit<RunOptions, 'dryRun'>, job: (deps: Deps) => Promise<JobSummary>): Promise<number> {
  const { reply } = run;
  const deps = openJobDeps(cmd, 1, run);
  try {
    let summary: JobSummary;
    try {
      summary = await job(deps);
    } catch (err) {
      if (err instanceof ImportTimeoutError) {
        const partial = (err as { summary?: JobSummary }).summary;
        reply.error(EXIT.timeout, err.message, partial ? summaryBody(partial) : {}, 'timeout');
        return EXIT.timeout;
      }
      return lockedOr(err, reply);
    }
    reply.summary(summary, { text: playbookSummaryText });
    return exitCodeFor(summary);
  } finally {
    await deps.close();
  }
}

/** A playbook job's summary in text (its JSON is every job's, summaryEnvelope). */
export function playbookSummaryText(s: JobSummary): string {
  const c = s.counts;
  const lines = [
    `${s.job} run ${s.runId}: ${s.status} in ${formatDuration(s.durationMs)}`,
    // A backup counts an unchanged playbook apart from one skipped for a reason (one word, one meaning).
    `  found ${c.discovered}  ${writtenVerb(s.job)} ${c.uploaded}${c.reconciled ? `  already in place ${c.reconciled}` : ''}  unchanged ${c.unchanged ?? 0}  skipped ${c.skipped}  failed ${c.failed}  bytes ${formatBytes(s.bytes)}`,
  ];
  if (s.parts) lines.push(`  sub-resources: ${Object.entries(s.parts as Record<string, number>).map(([k, n]) => `${k} ${n}`).join(', ')}`);
  if (s.target) lines.push(`  ${targetLine(s.job, s.target as Target)}`);
  if (s.playbookIdentifier) lines.push(`  playbook on the target: ${String(s.playbookIdentifier)}`);
  if (Array.isArray(s.optionsCreated) && s.optionsCreated.length) lines.push(`  options created on the target: ${s.optionsCreated.map((n) => visible(String(n))).join(', ')}`);
  if (Array.isArray(s.pruned) && s.pruned.length) lines.push(`  pruned: ${plural(s.pruned.length, 'archive', 'archives')}`);
  for (const h of (s.healed as { file: string; why: string }[] | undefined) ?? []) lines.push(`  written again: the newest backup ${visible(h.file)} was damaged (${h.why})`);
  for (const e of s.errors.slice(0, 20)) lines.push(`    ${visible(e.key)}: ${safeText(e.error)}`);
  for (const p of s.problems.slice(0, 20)) lines.push(`    ${visible(p.key)}: ${safeText(p.reason)}`);
  return `${layout(lines.join('\n'))}\n`;
}

/** Progress on a terminal: a line on stderr per playbook done; nothing under --json or off a TTY. */
function live<A extends unknown[]>(reply: Reply, line: (...args: A) => string): ((...args: A) => void) | undefined {
  if (!reply.display.progress || process.stderr.isTTY !== true) return undefined;
  return (...args) => process.stderr.write(`${line(...args)}\n`);
}
