// `ferry pull PROJECT DIR`: a project's documents into a local folder.
import type { Command } from 'commander';
import { planPull, pull, type PullOptions } from '../../../jobs/pull.js';
import { visible } from '../../backends/names.js';
import { EXIT } from '../exit-codes.js';
import { exitCodeFor, printSummary, targetLine } from '../output.js';
import { jobFromFlags, lockedOr, openJobDeps, type RunOptions } from '../shared.js';
import { ConfigurationError } from '../../api/errors.js';
import { projectFlag, resolveProject } from '../../backends/project/named.js';
import { PlanOutput } from '../plan-output.js';


/** Problems a dry run names in text; --json lists up to the plan's own cap. */
const PROBLEMS_SHOWN = 20;

export async function pullAction(project: string, dir: string, opts: Record<string, unknown>, cmd: Command): Promise<void> {
  if (opts.manifest !== undefined) throw new ConfigurationError('--manifest means nothing to pull: a pull writes each document as it is; --manifest-out FILE writes the manifest of their metadata (mirror, upload and check read one)');
  const loaded = jobFromFlags('pull', { project: projectFlag('PROJECT', project), dir }, opts);
  const json = opts.json === true;
  const dryRun = opts.dryRun === true;
  if (opts.manifestOut !== undefined && dryRun) process.stderr.write('ferry: --manifest-out does nothing with --dry-run: the manifest is written by a pull that lists every document\n');
  const options: PullOptions = { ...loaded.pull, progress: !json, statsIntervalMs: loaded.statsIntervalMs };
  process.exitCode = await runPullCommand(cmd, options, { json, rps: loaded.rps, state: loaded.state, dryRun });
}

/** Shared by `pull` and `run` of a pull job file. */
export async function runPullCommand(cmd: Command, options: PullOptions, run: RunOptions): Promise<number> {
  const json = run.json;
  const deps = openJobDeps(cmd, options.concurrency, run);
  try {
    options = { ...options, project: await resolveProject(deps.client, options.project, 'PROJECT') };
    if (run.dryRun) {
      const out = new PlanOutput(json, 'download', 'gone from the project');
      const plan = await planPull(options, deps, out.item);
      out.finish(EXIT.ok, { ...out.transferFields(plan), target: deps.client.target }, out.transferHead(plan, { target: targetLine('pull', deps.client.target), problem: { one: 'not pulled', many: 'not pulled' }, shown: PROBLEMS_SHOWN }));
      return EXIT.ok;
    }
    const summary = await pull(options, deps);
    printSummary(summary, json, process.stdout, deps.store.reopenFlags);
    const written = summary.manifest as { file: string; rows: number; columns: string[] } | undefined;
    if (written && !json) process.stdout.write(`  manifest: ${visible(written.file)}: ${written.rows} rows, ${written.columns.length} metadata columns (mirror --manifest gives another project the same metadata)\n`);
    return exitCodeFor(summary);
  } catch (err) {
    return lockedOr(err, json);
  } finally {
    await deps.close();
  }
}
