// `ferry report`: what a batch did (a playbook's upload, or a mirror's or migration's documents):
// totals, failure reasons explained, file types and the failed files with their local paths
// (joined through the checkpoint store when ferry uploaded them, else the documents' ferry.path).
import { writeWhole } from '../../backends/own-files.js';
import { extname } from 'node:path';
import { ConfigurationError } from '../../api/errors.js';
import type { Command } from 'commander';
import { buildProjectBatchReport, buildReport } from '../../report/model.js';
import { renderReport, type ReportFormat } from '../../report/render.js';
import type { CheckpointStore, RunRecord } from '../../store/types.js';
import { openJobDeps, positiveInt, uuidFlag } from '../shared.js';
import { projectFlag, resolveProject } from '../../backends/project/named.js';
import type { FerryClient } from '../../api/client.js';
import { EXIT } from '../exit-codes.js';
import { Reply } from '../reply.js';
import { endOnFirstSignal } from '../read-only-stop.js';

export async function reportAction(opts: { playbook?: string; upload?: string; run?: string; project?: string; format?: ReportFormat | 'md'; json?: boolean; out?: string; state?: string }, cmd: Command): Promise<void> {
  const format = reportFormat(opts);
  const reply = Reply.to(opts);
  const deps = openJobDeps(cmd, 1, { state: opts.state });
  let opened: string | undefined;
  const stopped = endOnFirstSignal(reply, () => (opened ? { reported: opened } : {}));
  try {
    const batch = resolveBatch(deps.store, await withProjectId(deps.client, opts));
    opened = describeBatch(batch, deps.storePath);
    if (!reply.json) process.stderr.write(`ferry: report of ${opened}\n`);
    const report =
      batch.kind === 'playbook'
        ? await buildReport({ client: deps.client, playbookIdentifier: batch.playbook, uploadIdentifier: batch.upload, project: batch.project, store: deps.store, jobKey: batch.jobKey })
        : await buildProjectBatchReport({ client: deps.client, project: batch.project, uploadIdentifier: batch.upload, store: deps.store, jobKey: batch.jobKey });
    if (batch.kind === 'project' && report.totals.files === 0) {
      throw new ConfigurationError(
        // Read from a listing: a batch uploaded moments ago to a service that lists late is not shown yet, and said so.
        `no document of project ${batch.project} is listed for batch ${batch.upload}, and no playbook upload with that id is known here: looked for both; for a playbook's batch give --playbook (a batch uploaded moments ago may not be listed yet by a service that lists late: run it again)`,
      );
    }
    // --json answers on stdout as every command does (the report inside, or where it was written).
    if (opts.out) await writeWhole(opts.out, renderReport(report, format));
    reply.answer('succeeded', EXIT.ok, { reported: opened, ...(opts.out ? { out: opts.out, format } : { report }) }, () => (opts.out ? undefined : renderReport(report, format)));
  } finally {
    stopped();
    await deps.close();
  }
}

/** `--project` by its id, or by its name looked up once (src/cli/project-name.ts). */
export async function withProjectId<O extends { project?: string | undefined }>(client: FerryClient, opts: O): Promise<O> {
  return opts.project === undefined ? opts : { ...opts, project: await resolveProject(client, projectFlag('--project', opts.project)) };
}

/** A batch as `report` and `watch` take it: a playbook document upload, or the documents of a project that carry its id. */
export type Batch = ({ kind: 'playbook'; playbook: string; upload: string; project?: string | undefined } | { kind: 'project'; project: string; upload: string }) & {
  jobKey?: string | undefined;
  /** The run of this store that made it, when it did. */
  runId?: number | undefined;
  /** Documents that run uploaded into it: what a wait waits for. */
  expected?: number | undefined;
};

/** A batch as `watch` and `report` say what they opened: which batch, of what, by which run of which store. */
export function describeBatch(batch: Batch, store: string): string {
  const of = batch.kind === 'playbook' ? `playbook ${batch.playbook}` : `project ${batch.project}`;
  return `batch ${batch.upload} of ${of}${batch.runId !== undefined ? `, made by run ${batch.runId} of the checkpoint store ${store}` : ''}`;
}

/**
 * Which batch is meant: `--upload ID` or `--run N|last` (a run this store recorded), then what the
 * store knows of the run that made it (its playbook, project, checkpoint items), then `--playbook`
 * and `--project` where the store knows nothing (another machine's batch, no store at all).
 */
export function resolveBatch(store: CheckpointStore, opts: { playbook?: string; upload?: string; run?: string; project?: string }): Batch {
  if (opts.upload !== undefined && opts.run !== undefined) throw new ConfigurationError('give --upload ID or --run N, not both');
  let run: RunRecord | undefined;
  if (opts.run !== undefined) {
    run = opts.run === 'last' ? store.listRuns({ limit: 1_000 }).find((r) => r.uploadId && r.counts.uploaded > 0) : store.getRun(positiveInt('--run', opts.run));
    if (!run) throw new ConfigurationError(opts.run === 'last' ? 'this checkpoint store (--state) holds no run that uploaded anything: `ferry jobs list` shows its runs' : `run ${opts.run} is not in this checkpoint store (--state): \`ferry jobs list\` shows its runs`);
    if (!run.uploadId) throw new ConfigurationError(`run ${run.id} (${run.job}) uploaded nothing: it has no batch to report`);
  }
  if (opts.upload === undefined && !run) throw new ConfigurationError('which batch? give --upload ID (a batch id, as a summary prints it) or --run N|last (a run of this checkpoint store)');
  const upload = run ? (run.uploadId as string) : uuidFlag('--upload', opts.upload as string);
  run ??= store.listRuns({ limit: 10_000 }).find((r) => r.uploadId === upload);
  const known = run ? { playbook: stringParam(run, 'playbook'), project: stringParam(run, 'project'), jobKey: run.jobKey } : undefined;
  const playbook = opts.playbook !== undefined ? uuidFlag('--playbook', opts.playbook) : known?.playbook;
  const project = opts.project !== undefined ? uuidFlag('--project', opts.project) : known?.project;
  const made = run ? { runId: run.id, expected: run.counts.uploaded } : {};
  if (playbook) return { kind: 'playbook', playbook, upload, project, jobKey: known?.jobKey, ...made };
  if (project) return { kind: 'project', project, upload, jobKey: known?.jobKey, ...made };
  throw new ConfigurationError(`batch ${upload} was not made through this checkpoint store (--state): give --project ID for a mirror's or a migration's batch, or --playbook ID for a playbook's`);
}

function stringParam(run: RunRecord, key: string): string | undefined {
  const value = run.params[key];
  return typeof value === 'string' ? value : undefined;
}

/** Formats by the --out file's extension. */
const BY_EXTENSION: Record<string, ReportFormat> = { '.txt': 'text', '.json': 'json', '.csv': 'csv', '.md': 'markdown', '.markdown': 'markdown', '.html': 'html', '.htm': 'html' };

/**
 * The format asked for: --format (md for markdown), or else the --out file's extension, or else
 * json under --json, or else text. Two that disagree are refused rather than one silently winning;
 * --json without --out answers with the report inside its JSON, so it takes no other format.
 */
export function reportFormat(opts: { format?: ReportFormat | 'md'; json?: boolean; out?: string }): ReportFormat {
  const flag = opts.format === 'md' ? 'markdown' : opts.format;
  if (opts.json && !opts.out && flag && flag !== 'json') throw new ConfigurationError(`--json and --format ${opts.format} ask for two formats on stdout: give one, or write the report with --out`);
  const asked = flag;
  const fromName = opts.out ? BY_EXTENSION[extname(opts.out).toLowerCase()] : undefined;
  if (asked && fromName && asked !== fromName) throw new ConfigurationError(`--out ${opts.out} looks like ${fromName} but the format asked for is ${asked}: rename the file or drop the flag`);
  return asked ?? fromName ?? (opts.json ? 'json' : 'text');
}

