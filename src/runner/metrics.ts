// What a run did, for Prometheus: node_exporter's textfile collector (a `.prom` file written
// atomically, at each --stats interval while the run lasts and at its end) and the Pushgateway
// (pushed at the end, a fresh container's run included). prom-client renders the exposition format
// (names, HELP and TYPE lines, label values escaped). Series follow Prometheus's conventions:
// `ferry_` prefix, `_total` for counts, `_seconds` and `_bytes` in base units; labels name the job
// kind, the job's name, the tenant (its host) and the project or playbook, never a file's name.
// docs/monitoring.md lists every series; config/prometheus/ferry-alerts.yaml alerts on them.
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { hostname } from 'node:os';
import { Counter, Gauge, Pushgateway, Registry } from 'prom-client';
import { transportTotals } from '../api/transport.js';
import { redactUrls, shownUrl } from '../api/addresses.js';
import { liveRuns, observeRuns, type JobSummary, type LiveRun } from './job.js';
import { DEFAULT_STATS_MS } from './progress.js';

export interface MetricsSettings {
  /** The textfile collector's file (`--metrics-file`). */
  file?: string | undefined;
  /** The Pushgateway's address (`--pushgateway`). */
  pushgateway?: string | undefined;
  /** How often the file is written while the run lasts (`--stats`, default 30 s). */
  intervalMs?: number | undefined;
  /** The job kind before any run says it (a run refused by its lock still reports). */
  jobKind: string;
  /** The job's name: a job file's, else the job kind. */
  jobName?: string | undefined;
  /** The tenant (host) and project or playbook as the command names them, until a run says. */
  tenant?: string | undefined;
  project?: string | undefined;
  playbook?: string | undefined;
  /** The Pushgateway's instance grouping key (default: this host's name). */
  instance?: string | undefined;
  /** How a run's summary ends the command, as the command line says it (exit code, status). */
  ending?: ((summary: JobSummary) => Ending) | undefined;
}

/** The end of the command: its exit code and the status its answer says. */
export interface Ending {
  exitCode: number;
  status: string;
}

const LABELS = ['job_kind', 'job_name', 'tenant', 'project', 'playbook'] as const;
type Labels = Record<(typeof LABELS)[number], string>;

/** A run's series, rendered into one registry per write (a write is a snapshot, never half of one). */
export class RunMetrics {
  private readonly startedAt = Date.now();
  private readonly summaries: JobSummary[] = [];
  private readonly stopObserving: () => void;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private previousSuccess: number | undefined;

  /** What the Pushgateway last received, if anything. */
  private pushed: Ending | undefined;
  /** How the last run that ended says it ended (its status is finer than the exit code's). */
  private lastEnding: Ending | undefined;

  constructor(private readonly settings: MetricsSettings) {
    this.stopObserving = observeRuns({
      finished: async (summary) => {
        this.summaries.push(summary);
        if (!this.settings.ending) return;
        const end = (this.lastEnding = this.settings.ending(summary));
        // Pushed as each run ends, so that a gateway that is down is said in the run's own summary.
        if (!this.settings.pushgateway) return;
        const warning = await this.pushSafely(end);
        if (warning) summary.problems.push({ key: '(metrics)', reason: `warning: ${warning}` });
      },
    });
  }

  private async pushSafely(end: Ending): Promise<string | undefined> {
    try {
      await this.push(end);
      this.pushed = end;
      return undefined;
    } catch (err) {
      this.pushed = end;
      return `the metrics were not pushed to ${shownUrl(this.settings.pushgateway ?? '')}: ${redactUrls((err as Error).message)}; the job itself is not affected`;
    }
  }

  /** Reads what the last run recorded, writes the file once (a path that cannot be written fails here), then every interval. */
  async start(): Promise<void> {
    if (!this.settings.file) return;
    this.previousSuccess = await lastSuccessIn(this.settings.file);
    await this.write(undefined);
    this.timer = setInterval(() => void this.write(undefined).catch(() => undefined), this.settings.intervalMs ?? DEFAULT_STATS_MS);
    this.timer.unref();
  }

  /** The last write and the push. What went wrong with either is returned as warnings, never thrown. */
  async finish(ending: Ending): Promise<string[]> {
    // The last run's own words when the command ended as it did (interrupted, not only exit 3).
    const end = this.lastEnding?.exitCode === ending.exitCode ? this.lastEnding : ending;
    clearInterval(this.timer);
    this.stopObserving();
    const warnings: string[] = [];
    if (this.settings.file) {
      await this.write(end).catch((err: unknown) => warnings.push(`the metrics file ${this.settings.file} could not be written: ${(err as Error).message}`));
    }
    // Pushed again only when the command ended otherwise than its last run said (a run that never
    // started: a held lock, a usage error; an upload whose processing timed out).
    if (this.settings.pushgateway && (this.pushed?.exitCode !== end.exitCode || this.pushed?.status !== end.status)) {
      const warning = await this.pushSafely(end);
      if (warning) warnings.push(warning);
    }
    return warnings;
  }

  /** The series of the run so far (undefined: still running) or at its end. */
  async render(end: Ending | undefined, forPush = false): Promise<{ text: string; registry: Registry }> {
    const registry = new Registry();
    const labels = this.labels();
    const gauge = (name: string, help: string, extra: string[] = []) => new Gauge({ name, help, labelNames: [...LABELS, ...extra], registers: [registry] });
    const counter = (name: string, help: string, extra: string[] = []) => new Counter({ name, help, labelNames: [...LABELS, ...extra], registers: [registry] });
    const now = Date.now();
    const runs = this.runsSoFar();
    const sum = (f: (r: RunView) => number) => runs.reduce((n, r) => n + f(r), 0);

    gauge('ferry_run_start_timestamp_seconds', 'When the run started (Unix time).').set(labels, this.startedAt / 1000);
    gauge('ferry_run_updated_timestamp_seconds', 'When these figures were written (Unix time): a file that stops changing while in progress is a run that hangs.').set(labels, now / 1000);
    gauge('ferry_run_in_progress', '1 while the run lasts, 0 once it ended.').set(labels, end ? 0 : 1);
    gauge('ferry_run_duration_seconds', 'How long the run has lasted, or lasted.').set(labels, (now - this.startedAt) / 1000);
    if (end) {
      gauge('ferry_run_end_timestamp_seconds', 'When the run ended (Unix time).').set(labels, now / 1000);
      gauge('ferry_run_exit_code', "The command's exit code (docs/cli.md, Exit codes).").set(labels, end.exitCode);
      gauge('ferry_run_success', '1 when the run succeeded (exit 0), else 0.').set(labels, end.exitCode === 0 ? 1 : 0);
      const status = gauge('ferry_run_status', "The run's status as its --json answer says it: 1 for the one it ended with.", ['status']);
      status.set({ ...labels, status: end.status }, 1);
    }
    // The last success: this run's end, or, in the file, the one the file held (a failed run does
    // not make the last success younger); a push of a failed run leaves the gateway's own.
    const lastSuccess = end?.exitCode === 0 ? now : this.previousSuccess;
    if (lastSuccess !== undefined && !(forPush && end?.exitCode !== 0)) {
      gauge('ferry_run_last_success_timestamp_seconds', 'When this job last succeeded (Unix time).').set(labels, lastSuccess / 1000);
    }

    const items = counter('ferry_items_total', 'Entries of the source by how they ended: uploaded (written), reconciled, unchanged, skipped (with a reason), failed, interrupted.', ['outcome']);
    const written = sum((r) => r.counts.uploaded ?? 0);
    items.inc({ ...labels, outcome: 'uploaded' }, written);
    items.inc({ ...labels, outcome: 'reconciled' }, sum((r) => r.counts.reconciled ?? 0));
    items.inc({ ...labels, outcome: 'unchanged' }, sum((r) => r.counts.unchanged ?? 0));
    items.inc({ ...labels, outcome: 'skipped' }, sum((r) => r.counts.skipped ?? 0));
    items.inc({ ...labels, outcome: 'failed' }, sum((r) => r.counts.failed ?? 0));
    items.inc({ ...labels, outcome: 'interrupted' }, sum((r) => r.counts.interrupted ?? 0));
    const skippedBy = counter('ferry_items_skipped_total', 'Entries skipped with a reason, by kind of reason (symlink, duplicate, gone, repeated: said by name on an earlier run, other).', ['reason']);
    const failedBy = counter('ferry_items_failed_total', 'Entries that failed, by the mark of the failure (src/marks.ts: transient, throttled, fatal, gone, conflict, item).', ['mark']);
    for (const r of runs) {
      for (const [reason, n] of Object.entries(r.skippedByReason)) skippedBy.inc({ ...labels, reason }, n);
      if (r.repeatedNotices) skippedBy.inc({ ...labels, reason: 'repeated' }, r.repeatedNotices);
      const marked = Object.values(r.failedByMark).reduce((a, b) => a + b, 0);
      for (const [mark, n] of Object.entries(r.failedByMark)) failedBy.inc({ ...labels, mark }, n);
      const unmarked = (r.counts.failed ?? 0) - marked;
      if (unmarked > 0) failedBy.inc({ ...labels, mark: 'item' }, unmarked);
    }
    counter('ferry_bytes_total', 'Content bytes written (uploaded, downloaded, copied, archived).').inc(labels, sum((r) => r.bytes));

    const calls = transportTotals();
    const requests = counter('ferry_requests_total', 'Requests to the service by the class of their answer (2xx…5xx), or none (no answer: a reset, a timeout).', ['code_class']);
    for (const [cls, n] of Object.entries(calls.responses)) requests.inc({ ...labels, code_class: cls }, n);
    requests.inc({ ...labels, code_class: 'none' }, calls.unanswered);
    counter('ferry_request_retries_total', 'Requests sent again after a failure.').inc(labels, calls.retries);
    counter('ferry_throttle_wait_seconds_total', 'Time spent waiting because the service pushed back (429, 503, the pace learned from them).').inc(labels, calls.throttleWaitMs / 1000);
    counter('ferry_lease_wait_seconds_total', "Time spent waiting for the destination's lease on the service (--wait-lock).").inc(labels, sum((r) => r.leaseWaitMs) / 1000);

    const lagged = runs.filter((r) => r.listingLag);
    if (lagged.length) {
      gauge('ferry_listing_lag_bound_seconds', 'The listing lag the run honoured (--listing-lag): decisions from listings waited it out.').set(labels, Math.max(...lagged.map((r) => r.listingLag?.boundMs ?? 0)) / 1000);
      gauge('ferry_listing_lag_observed_seconds', "The longest one of the run's own writes was seen missing from a listing begun after it (a lower bound of the service's lag); above the bound, the run stopped.").set(labels, Math.max(...lagged.map((r) => r.listingLag?.observedMaxMs ?? 0)) / 1000);
    }

    // Upload batches: what the service failed, by reason, beside how many documents the batches hold.
    const batches = runs.filter((r) => r.failedReasonSummary);
    if (batches.length) {
      const failedDocs = counter('ferry_upload_failed_documents_total', 'Documents of the upload batches the service failed, by UploadFailedReason (its failedReasonSummary).', ['reason']);
      for (const r of batches) for (const [reason, n] of Object.entries(r.failedReasonSummary ?? {})) failedDocs.inc({ ...labels, reason }, n);
      counter('ferry_upload_documents_total', 'Documents the upload batches hold (uploaded or reconciled into them).').inc(labels, batches.reduce((n, r) => n + (r.counts.uploaded ?? 0) + (r.counts.reconciled ?? 0), 0));
    }

    // Backups: archives written, bad archives found (and moved aside), the newest good one of each playbook.
    const backups = runs.filter((r) => r.job === 'playbooks-backup');
    if (backups.length) {
      counter('ferry_backup_archives_written_total', 'Playbook archives the backup wrote.').inc(labels, backups.reduce((n, r) => n + (r.counts.uploaded ?? 0), 0));
      counter('ferry_backup_bad_archives_total', 'Newest archives the backup found missing or damaged on disk, and replaced.').inc(labels, backups.reduce((n, r) => n + r.healed.length, 0));
      counter('ferry_backup_quarantined_archives_total', 'Damaged archives the backup moved aside (kept, renamed .quarantined).').inc(labels, backups.reduce((n, r) => n + r.healed.filter((h) => h.quarantinedAs).length, 0));
      const newest = await newestGoodArchives(backups);
      const at = gauge('ferry_backup_newest_good_archive_timestamp_seconds', 'When the newest good archive of each playbook was exported (Unix time).', ['backup_playbook']);
      const age = gauge('ferry_backup_newest_good_archive_age_seconds', 'How old the newest good archive of each playbook was when these figures were written.', ['backup_playbook']);
      for (const [playbook, exportedAt] of newest) {
        at.set({ ...labels, backup_playbook: playbook }, exportedAt / 1000);
        age.set({ ...labels, backup_playbook: playbook }, Math.max(0, now - exportedAt) / 1000);
      }
    }
    return { text: await registry.metrics(), registry };
  }

  private labels(): Labels {
    const first = this.summaries[0];
    const live = liveRuns()[0];
    const target = (first?.target ?? live?.target) as { host?: string } | undefined;
    // What the run works on, from its summary or, while it runs, its parameters.
    const fields = { ...(live?.params ?? {}), ...(first ?? {}) } as Record<string, unknown>;
    const playbook = fields.playbook;
    const kind = first?.job ?? live?.job ?? this.settings.jobKind;
    return {
      job_kind: kind,
      job_name: this.settings.jobName ?? kind,
      tenant: target?.host ?? this.settings.tenant ?? '',
      project: typeof fields.project === 'string' ? fields.project : (this.settings.project ?? ''),
      playbook: typeof playbook === 'string' ? playbook : playbook && typeof playbook === 'object' && 'objectIdentifier' in playbook ? String(playbook.objectIdentifier) : (this.settings.playbook ?? ''),
    };
  }

  /** The runs that ended and those under way, as the series read them. */
  private runsSoFar(): RunView[] {
    return [...this.summaries.map(viewOfSummary), ...liveRuns().map(viewOfLive)];
  }

  /** Written beside the file under a temporary name, then renamed over it: a reader sees the old or the new, never half. */
  private write(end: Ending | undefined): Promise<void> {
    const file = this.settings.file as string;
    this.writing = this.writing.then(async () => {
      const { text } = await this.render(end);
      const dir = await mkdtemp(join(dirname(file), '.ferry-metrics-'));
      const temp = join(dir, 'metrics.prom');
      try {
        await writeFile(temp, text);
        await rename(temp, file);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
    return this.writing;
  }

  private async push(end: Ending): Promise<void> {
    const { registry } = await this.render(end, true);
    const labels = this.labels();
    const gateway = new Pushgateway(this.settings.pushgateway as string, { timeout: 10_000 }, registry);
    // POST: series of this push replace theirs in the group, others stay (a failed run leaves the
    // last success the gateway holds).
    await gateway.pushAdd({ jobName: labels.job_name, groupings: { instance: this.settings.instance ?? hostname() } });
  }
}

interface RunView {
  job: string;
  counts: Record<string, number>;
  bytes: number;
  failedByMark: Record<string, number>;
  skippedByReason: Record<string, number>;
  repeatedNotices: number;
  leaseWaitMs: number;
  /** The run's listing lag: its bound and the longest one of its own writes was seen missing. */
  listingLag: { boundMs: number; observedMaxMs: number } | undefined;
  failedReasonSummary: Record<string, number> | undefined;
  healed: { quarantinedAs?: string }[];
  index: string | undefined;
}

function viewOfSummary(s: JobSummary): RunView {
  return {
    job: s.job,
    counts: s.counts as unknown as Record<string, number>,
    bytes: s.bytes,
    failedByMark: (s.failedByMark as Record<string, number> | undefined) ?? {},
    skippedByReason: (s.skippedByReason as Record<string, number> | undefined) ?? {},
    repeatedNotices: (s.repeatedNotices as number | undefined) ?? 0,
    leaseWaitMs: (s.lease as { waitedMs?: number } | undefined)?.waitedMs ?? 0,
    listingLag: s.listingLag as RunView['listingLag'],
    failedReasonSummary: s.failedReasonSummary as Record<string, number> | undefined,
    healed: (s.healed as { quarantinedAs?: string }[] | undefined) ?? [],
    index: s.index as string | undefined,
  };
}

function viewOfLive(r: LiveRun): RunView {
  return {
    job: r.job,
    counts: r.ctx.counts as unknown as Record<string, number>,
    bytes: r.ctx.bytes,
    failedByMark: r.ctx.failedByMark ?? {},
    skippedByReason: r.ctx.skippedByReason ?? {},
    repeatedNotices: 0,
    leaseWaitMs: 0,
    listingLag: undefined,
    failedReasonSummary: undefined,
    healed: [],
    index: undefined,
  };
}

/** The export time of each playbook's newest good archive, from the backup folder's index. */
async function newestGoodArchives(backups: RunView[]): Promise<Map<string, number>> {
  const newest = new Map<string, number>();
  for (const r of backups) {
    if (!r.index) continue;
    const index = JSON.parse(await readFile(r.index, 'utf8').catch(() => '{}')) as { backups?: { playbookIdentifier: string; exportedAt: string }[] };
    for (const b of index.backups ?? []) {
      const at = Date.parse(b.exportedAt);
      if (Number.isFinite(at) && at > (newest.get(b.playbookIdentifier) ?? -Infinity)) newest.set(b.playbookIdentifier, at);
    }
  }
  return newest;
}

/** The last success an earlier run wrote into the file, if any (a run that fails keeps it). */
async function lastSuccessIn(file: string): Promise<number | undefined> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const m = /^ferry_run_last_success_timestamp_seconds(?:\{[^}]*\})? ([0-9.e+]+)$/m.exec(text);
  return m ? Number(m[1]) * 1000 : undefined;
}
