// `ferry pull PROJECT DIR`: a project's documents into a local folder.
import type { Command } from 'commander';
import { planPull, pull, type PullOptions } from '../../../jobs/pull.js';
import { visible } from '../../text.js';
import { EXIT } from '../exit-codes.js';
import { exitCodeFor, targetLine } from '../output.js';
import { Reply } from '../reply.js';
import { jobFromFlags, lockedOr, openJobDeps, type RunOptions } from '../shared.js';
import { ConfigurationError } from '../../api/errors.js';
import { projectFlag, resolveProject } from '../../backends/project/named.js';
import { PlanOutput } from '../plan-output.js';


/** Problems a dry run names in text; --json lists up to the plan's own cap. */
const PROBLEMS_SHOWN = 20;

export async function pullAction(project: string, dir: string, opts: Record<string, unknown>, cmd: Command): Promise<void> {
  if (opts.manifest !== undefined) throw new ConfigurationError('--manifest means nothing to pull: a pull writes each document as it is; --manifest-out FILE writes the manifest of their metadata (mirror, upload and check read one)');
  const loaded = jobFromFlags('pull', { project: projectFlag('PROJECT', project), dir }, opts);
  const dryRun = opts.dryRun === true;
  if (opts.manifestOut !== undefined && dryRun) process.stderr.write('ferry: --manifest-out does nothing with --dry-run: the manifest is written by a pull that lists every document\n');
  process.exitCode = await runPullCommand(cmd, loaded.pull, { reply: Reply.to(opts, loaded.statsIntervalMs), rps: loaded.rps, state: loaded.state, dryRun });
}

/** Shared by `pull` and `run` of a pull job file. */
export async function runPullCommand(cmd: Command, options: PullOptions, run: RunOptions): Promise<number> {
  const { reply } = run;
  const deps = openJobDeps(cmd, options.concurrency, run);
  try {
    options = { ...options, project: await resolveProject(deps.client, options.project, 'PROJECT') };
    if (run.dryRun) {
      const out = new PlanOutput(reply, 'download', 'gone from the project');
      const plan = await planPull(options, deps, out.item);
      out.finish(EXIT.ok, { ...out.transferFields(plan), target: deps.client.target }, out.transferHead(plan, { target: targetLine('pull', deps.client.target), problem: { one: 'not pulled', many: 'not pulled' }, shown: PROBLEMS_SHOWN }));
      return EXIT.ok;
    }
    const summary = await pull(options, { ...deps, display: reply.display });
    reply.summary(summary, { reopen: deps.store.reopenFlags });
    const written = summary.manifest as { file: string; rows: number; columns: string[] } | undefined;
    if (written) reply.text(`  manifest: ${visible(written.file)}: ${written.rows} rows, ${written.columns.length} metadata columns (mirror --manifest gives another project the same metadata)`);
    return exitCodeFor(summary);
  } catch (err) {
    return lockedOr(err, reply);
  } finally {
    await deps.close();
  }
}
