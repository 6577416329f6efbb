// `ferry report`: what a batch did: totals, failure reasons explained, file types and the failed
// files with their local paths (joined through the checkpoint store when ferry uploaded them).
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { buildReport } from '../../report/model.js';
import { renderReport, type ReportFormat } from '../../report/render.js';
import type { CheckpointStore } from '../../store/types.js';
import { mirrorJobKey } from '../../../jobs/mirror.js';
import { openJobDeps } from '../shared.js';

export async function reportAction(opts: { playbook: string; upload: string; project?: string; format: ReportFormat; out?: string; state?: string }, cmd: Command): Promise<void> {
  const deps = openJobDeps(cmd, 1, { json: false, state: opts.state });
  try {
    const origin = findBatchRun(deps.store, opts.upload);
    const project = opts.project ?? origin?.project;
    const jobKey = origin ? mirrorJobKey(deps.client.transport.address.baseUrl, origin) : undefined;
    const report = await buildReport({ client: deps.client, playbookIdentifier: opts.playbook, uploadIdentifier: opts.upload, project, store: deps.store, jobKey });
    const text = renderReport(report, opts.format);
    if (opts.out) await writeFile(opts.out, text);
    else process.stdout.write(text);
  } finally {
    await deps.close();
  }
}


/** The run that uploaded a batch, if this checkpoint store has it: its source and project. */
function findBatchRun(store: CheckpointStore, uploadId: string): { source: string; project: string; to?: string } | undefined {
  const run = store.listRuns({ limit: 10_000 }).find((r) => r.uploadId === uploadId);
  if (!run || typeof run.params.source !== 'string' || typeof run.params.project !== 'string') return undefined;
  return { source: run.params.source, project: run.params.project, ...(typeof run.params.to === 'string' ? { to: run.params.to } : {}) };
}
