// `ferry report`: what a batch did: totals, failure reasons explained, file types and the failed
// files with their local paths (joined through the checkpoint store when ferry uploaded them).
import { writeFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { ConfigurationError } from '../../api/errors.js';
import type { Command } from 'commander';
import { buildReport } from '../../report/model.js';
import { renderReport, type ReportFormat } from '../../report/render.js';
import type { CheckpointStore } from '../../store/types.js';
import { mirrorJobKey } from '../../../jobs/mirror.js';
import { openJobDeps, uuidFlag } from '../shared.js';
import { EXIT } from '../exit-codes.js';
import { writeEnvelope } from '../envelope.js';

export async function reportAction(opts: { playbook?: string; upload: string; project?: string; format?: ReportFormat | 'md'; json?: boolean; out?: string; state?: string }, cmd: Command): Promise<void> {
  const format = reportFormat(opts);
  const upload = uuidFlag('--upload', opts.upload);
  const deps = openJobDeps(cmd, 1, { json: false, state: opts.state });
  try {
    const origin = findBatchRun(deps.store, upload);
    const playbook = opts.playbook ?? origin?.playbook;
    if (!playbook) throw new ConfigurationError(`--playbook is required: batch ${upload} was not uploaded through this checkpoint store (--state), so its playbook is not known here`);
    const project = opts.project ?? origin?.project;
    const jobKey = origin ? mirrorJobKey(deps.client.transport.address.baseUrl, origin) : undefined;
    const report = await buildReport({ client: deps.client, playbookIdentifier: uuidFlag('--playbook', playbook), uploadIdentifier: upload, project, store: deps.store, jobKey });
    // --json answers on stdout as every command does (the report inside, or where it was written).
    if (opts.out) await writeFile(opts.out, renderReport(report, format));
    if (opts.json) writeEnvelope('succeeded', EXIT.ok, opts.out ? { out: opts.out, format } : { report });
    else if (!opts.out) process.stdout.write(renderReport(report, format));
  } finally {
    await deps.close();
  }
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

/** The run that uploaded a batch, if this checkpoint store has it: its source and project. */
function findBatchRun(store: CheckpointStore, uploadId: string): { source: string; project: string; to?: string; playbook?: string } | undefined {
  const run = store.listRuns({ limit: 10_000 }).find((r) => r.uploadId === uploadId);
  if (!run || typeof run.params.source !== 'string' || typeof run.params.project !== 'string') return undefined;
  return {
    source: run.params.source,
    project: run.params.project,
    ...(typeof run.params.to === 'string' ? { to: run.params.to } : {}),
    ...(typeof run.params.playbook === 'string' ? { playbook: run.params.playbook } : {}),
  };
}
