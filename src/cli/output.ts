// How a job's end is shown: one JSON object for machines, a few lines for people; and its exit code.
import { manifestLine } from '../manifest/said.js';
import type { ManifestOutcome } from '../manifest/index.js';
import type { JobSummary } from '../runner/job.js';
import { describeTarget, type Target } from '../api/target.js';
import { formatBytes, formatDuration, safeText, visible } from '../text.js';
import { EXIT } from './exit-codes.js';
import type { RunCounts } from '../store/types.js';
import { envelope } from './envelope.js';
import { layout } from '../runner/layout.js';
import type { LeaseReport } from '../runner/lease.js';
import { lostAdvice } from './lease-words.js';
import { RESUMABLE_JOBS } from '../settings/declared.js';

export function exitCodeFor(summary: JobSummary): number {
  if ((summary.lease as { lost?: string } | undefined)?.lost) return EXIT.leaseLost;
  if (summary.status === 'succeeded' && processingTimedOut(summary)) return EXIT.timeout;
  if (summary.status === 'succeeded') return EXIT.ok;
  if (summary.status === 'failed') return EXIT.failed;
  if (summary.status === 'limit') return EXIT.limit;
  return EXIT.aborted;
}

/** What the items a job wrote are called, in its summary and in its --json counts. */
const WRITTEN: Record<string, string> = {
  mirror: 'uploaded',
  upload: 'uploaded',
  pull: 'downloaded',
  migrate: 'copied',
  'playbooks-export': 'written',
  'playbooks-backup': 'written',
  'playbooks-import': 'created',
};

export function writtenVerb(job: string): string {
  return WRITTEN[job] ?? 'uploaded';
}

/** A run's counts with the written ones named for what happened (the store keeps them as `uploaded`). */
export function namedCounts(job: string, counts: RunCounts): Record<string, number> {
  const { discovered, uploaded, ...rest } = counts;
  return { discovered, [writtenVerb(job)]: uploaded, ...rest };
}

/** A job's summary as JSON: its counts named, `errors` apart from `problems`. */
export function summaryBody(summary: JobSummary): Record<string, unknown> {
  const { job, runId, status, counts, ...rest } = summary;
  return { job, runId, status, counts: namedCounts(job, counts), ...rest };
}

/** A job's summary as its --json answer; `reopen` as summaryText's, for the commands in `next`. */
export function summaryEnvelope(summary: JobSummary, exitCode = exitCodeFor(summary), status: string = statusOf(summary, exitCode), reopen = ''): Record<string, unknown> {
  const lost = lostSaid(summary);
  const timedOut = exitCode === EXIT.timeout ? summary.problems.find((p) => p.key === '(processing)')?.reason : undefined;
  const next = Object.values(followUps(summary, reopen));
  return envelope(status, exitCode, { ...(lost ? { error: lost } : {}), ...(timedOut ? { error: timedOut } : {}), ...summaryBody(summary), ...(next.length ? { next } : {}) });
}

/**
 * The commands a summary tells its user to run next, each ready to paste: the one owner of their
 * spelling, so the text and the JSON `next` say the same, and a test runs each as printed.
 */
export function followUps(summary: JobSummary, reopen = ''): { watch?: string; report?: string; resume?: string; show?: string } {
  const run = summary.runId;
  const processing = summary.processing as { waited?: boolean } | undefined;
  const c = summary.counts;
  return {
    // Processing not waited for: watch waits for it; a migration's projects each name their own report.
    ...(processing && !processing.waited ? { watch: `ferry watch --run ${run}${reopen}` } : {}),
    ...(processing && summary.job !== 'migrate' ? { report: `ferry report --run ${run}${reopen}` } : {}),
    ...(summary.status === 'interrupted' && c.interrupted && (RESUMABLE_JOBS as readonly string[]).includes(summary.job) ? { resume: `ferry jobs resume ${run}${reopen}` } : {}),
    ...(summary.errors.length > LISTED || (summary.problems ?? []).length > LISTED ? { show: `ferry jobs show ${run}${reopen}` } : {}),
  };
}

/** Errors (and notes) a text summary names one by one; `ferry jobs show` names the rest. */
const LISTED = 20;

/** A lease lost, as the user reads it: what happened, and what to do about it. */
function lostSaid(summary: JobSummary): string | undefined {
  const lease = summary.lease as Pick<LeaseReport, 'lost' | 'lostHow'> | undefined;
  if (!lease?.lost) return undefined;
  const advice = lostAdvice(lease.lostHow);
  return advice ? `${lease.lost} (${advice})` : lease.lost;
}

/** The status a run is said to have, agreeing with its exit code (a lost lease, a wait for processing that ran out). */
function statusOf(summary: JobSummary, exitCode = exitCodeFor(summary)): string {
  if (exitCode === EXIT.leaseLost) return 'lease-lost';
  if (exitCode === EXIT.timeout) return 'timeout';
  return summary.status;
}

/** Why a run whose items all went through failed: what the service's processing refused after. */
function failedBy(summary: JobSummary): string {
  const refused = (summary.processing as { refused?: number } | undefined)?.refused ?? 0;
  return summary.status === 'failed' && summary.counts.failed === 0 && refused > 0 ? ` (the service's processing refused ${plural(refused, 'document', 'documents')})` : '';
}

/** `n` and the word for that many. */
export function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** mirror --wait ran out before the service had processed the run's documents. */
function processingTimedOut(summary: JobSummary): boolean {
  return (summary.processing as { timedOut?: boolean } | undefined)?.timedOut === true;
}

/** A job's summary in text (Reply.summary writes it). `reopen`: the flags a printed follow-up command needs to reach the run's store and tenant (CheckpointStore.reopenFlags). */
export function summaryText(summary: JobSummary, reopen = ''): string {
  const next = followUps(summary, reopen);
  const c = summary.counts;
  const pulled = summary.job === 'pull';
  const verb = writtenVerb(summary.job);
  // A run that found everything already in place and has nothing else to say: one line, with the tenant.
  if (isNoOp(summary)) {
    return `${layout(`${summary.job} run ${summary.runId}: nothing to do, ${c.discovered === 1 ? 'its one entry' : `all ${c.discovered} entries`} already in place (checked in ${formatDuration(summary.durationMs)}${summary.target ? `; ${targetLine(summary.job, summary.target as Target)}` : ''})`)}\n`;
  }
  const lines = [
    `${summary.job} run ${summary.runId}: ${statusOf(summary)}${failedBy(summary)} in ${formatDuration(summary.durationMs)}`,
    `  discovered ${c.discovered}  ${verb} ${c.uploaded}  unchanged ${c.unchanged ?? 0}  skipped ${c.skipped}  failed ${c.failed}  reconciled ${c.reconciled}`,
    // The batch only when something went into it.
    `  bytes ${verb} ${formatBytes(summary.bytes)}${summary.uploadIdentifier && c.uploaded + c.failed > 0 ? `  batch ${String(summary.uploadIdentifier)}` : ''}`,
  ];
  const processing = summary.processing as { documents: number; completed: number; refused: number; processing: number; failedReasonSummary: Record<string, number>; waited: boolean } | undefined;
  if (processing?.waited) {
    const reasons = Object.entries(processing.failedReasonSummary).map(([r, n]) => `${r} ${n}`).join(', ');
    // A migration's copies are one batch per target project: each project's line names its report.
    const explained = next.report ? `\`${next.report}\` explains each reason` : "each project's line below names the report that explains them";
    lines.push(`  processed: ${processing.completed} indexed, ${processing.refused} refused${reasons ? ` (${reasons})` : ''}${processing.processing ? `, ${processing.processing} still processing` : ''}; ${explained}`);
  } else if (processing) {
    // Processing follows the upload: said, so that a run that "succeeded" is not read as files indexed.
    lines.push(`  processing: ${processing.processing} of the ${processing.documents} uploaded still being processed, ${processing.refused} refused so far; \`${next.watch}\` waits for them${next.report ? `, \`${next.report}\` says what was refused and why` : ''}`);
  }
  // A walk stopped part way: the counts are of what was looked at, not of what the source holds.
  if (summary.walkStopped) lines.push(`  stopped after ${c.discovered} of the source's entries: the rest were not looked at (not missing)`);
  if (summary.status === 'limit') lines.push(`  limit: ${c.interrupted ?? 0} not started or not finished; the next run of the same command carries on (exit 8)`);
  if (summary.status === 'interrupted' && (c.interrupted || summary.walkStopped)) {
    lines.push(`  interrupted: ${c.interrupted ?? 0} not finished; ${next.resume ? `resume with \`${next.resume}\` (or run the same command again)` : 'run the same command again to finish'}`);
  }
  if (summary.target) lines.push(`  ${targetLine(summary.job, summary.target as Target)}`);
  const lease = summary.lease as { on?: string; off?: string; waitedMs?: number; tookOverFrom?: unknown[] } | undefined;
  const lost = lostSaid(summary);
  if (lease?.off) lines.push(`  lease: none (${lease.off})`);
  else if (lease?.on) lines.push(`  lease: held on the service${lease.waitedMs ? ` after waiting ${formatDuration(lease.waitedMs)}` : ''}${lease.tookOverFrom?.length ? ` (taken over from ${lease.tookOverFrom.length} expired holder${lease.tookOverFrom.length === 1 ? '' : 's'})` : ''}${lost ? `; LOST: ${safeText(lost)}` : ''}`);
  const folders = summary.folders as { created: number; reused: number; flattened: number; creationUnavailable: boolean } | undefined;
  if (folders) {
    lines.push(`  folders: ${folders.created} created, ${folders.reused} reused, ${folders.flattened} flattened` +
      (folders.creationUnavailable ? ' (the service offers no folder creation: files of missing folders went to the nearest existing folder, their path in metadata ferry.relativePath)' : ''));
  }
  const renamed = summary.renamed as { key: string; local: string; why: string }[] | undefined;
  if (renamed?.length) {
    lines.push(`  names mapped for this file system: ${String(summary.renamedCount)}`);
    for (const r of renamed.slice(0, 10)) lines.push(`    ${visible(r.key)} -> ${visible(r.local)} (${r.why})`);
  }
  const names = summary.localNames as { rules: string; how: string; caseInsensitive: boolean; timeStepMs: number; refused?: string[] } | undefined;
  if (names) {
    const why =
      names.how === 'probed'
        ? names.refused?.length
          ? `probed: the folder refused ${names.refused.map((n) => `"${visible(n)}"`).join(', ')}`
          : 'probed: the folder took every name tried'
        : names.how === 'recorded'
          ? "the folder's record of names: an earlier pull wrote it by them"
          : names.how;
    lines.push(`  local names: ${names.rules} rules (${why}); case ${names.caseInsensitive ? 'folded' : 'told apart'}; file times kept to ${names.timeStepMs} ms`);
  }
  const drift = summary.drift as { missing: number; changed: number } | undefined;
  if (drift && drift.missing + drift.changed > 0) {
    const said = [
      ...(drift.missing ? [`${drift.missing} pulled ${drift.missing === 1 ? 'file' : 'files'} deleted here (downloaded again)`] : []),
      ...(drift.changed ? [`${drift.changed} changed here (${summary.replacedLocally ? 'replaced' : 'kept, and named among the errors'})`] : []),
    ];
    lines.push(`  the folder since the last pull: ${said.join(', ')}`);
  }
  const replaced = summary.replacedLocally as { count: number; files: { key: string; local: string; backup?: string }[] } | undefined;
  if (replaced) {
    lines.push(`  replaced with the project's version: ${replaced.count}`);
    for (const r of replaced.files.slice(0, 10)) lines.push(`    ${visible(r.local)}${r.backup ? ` (the local one kept as ${visible(r.backup)})` : ' (the local one overwritten)'}`);
  }
  const verification = summary.contentCheck as { verified: number; unverifiable: number } | undefined;
  if (verification) {
    const none = verification.unverifiable ? `; ${verification.unverifiable} carried no sha256 and could not be checked (--json names them)` : '';
    lines.push(`  content checked: ${verification.verified} matched the sha256 ${verification.verified === 1 ? 'its document carries' : 'their documents carry'}${none}`);
  }
  const manifest = summary.manifest as ManifestOutcome | undefined;
  if (manifest && 'withoutRow' in manifest) lines.push(`  ${manifestLine(manifest)}`);
  const superseded = summary.supersededCount as number | undefined;
  if (superseded) lines.push(`  changed files uploaded again: ${superseded} (the older documents remain on the service; see --json for their ids)`);
  const deleted = summary.deletedLocally as { count: number; sample: string[] } | undefined;
  if (deleted?.count) lines.push(`  ${pulled ? 'gone from the project' : 'deleted locally'} since the last run: ${deleted.count} (${pulled ? 'never deleted locally' : 'never deleted remotely'}): ${deleted.sample.map(visible).join(', ')}${deleted.count > deleted.sample.length ? ', …' : ''}`);
  const repeated = summary.repeatedNotices as number | undefined;
  if (repeated) lines.push(`  skipped again for the reasons given by name on an earlier run: ${repeated}`);
  // What failed first, then what was only said (skipped with a reason, a warning), each capped.
  const listed = (head: string, items: { key: string; text: string }[]) => {
    if (!items.length) return;
    lines.push(head);
    for (const e of items.slice(0, LISTED)) lines.push(`    ${visible(e.key)}: ${safeText(e.text)}`);
    if (items.length > LISTED) lines.push(`    … ${items.length - LISTED} more (\`${next.show}\`)`);
  };
  listed('  errors:', summary.errors.map((e) => ({ key: e.key, text: e.error })));
  // "Nothing failed" only where nothing did (a refusal by processing is one of the errors).
  listed(`  skipped or noted${summary.errors.length === 0 && c.failed === 0 ? ' (nothing failed)' : ''}:`, (summary.problems ?? []).map((p) => ({ key: p.key, text: p.reason })));
  return `${layout(lines.join('\n'))}\n`;
}

/** Jobs that read the tenant and write locally: their target is where they read from. */
const READS_THE_TENANT = new Set(['pull', 'playbooks-export', 'playbooks-backup']);

/** The tenant a run wrote to (`target: …`) or, for a job that writes locally, read from (`read from: …`). */
export function targetLine(job: string, target: Target): string {
  return `${READS_THE_TENANT.has(job) ? 'read from' : 'target'}: ${describeTarget(target)}`;
}

/** Succeeded, wrote, adopted, failed and said nothing: every entry was already where it belongs. */
function isNoOp(summary: JobSummary): boolean {
  const c = summary.counts;
  const said = (summary.problems ?? []).filter((p) => p.key !== '(lease)' || !p.reason.startsWith('warning: no lease'));
  const folders = summary.folders as { created?: number; flattened?: number } | undefined;
  const deleted = summary.deletedLocally as { count?: number } | undefined;
  return summary.status === 'succeeded' && c.discovered > 0 && c.uploaded === 0 && c.failed === 0 && c.reconciled === 0 && !c.interrupted &&
    summary.errors.length === 0 && said.length === 0 && !folders?.created && !folders?.flattened && !deleted?.count && !summary.supersededCount && !summary.renamed && !summary.repeatedNotices;
}
