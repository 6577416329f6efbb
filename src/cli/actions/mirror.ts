// `ferry mirror SOURCE --project ID`: a folder tree or a zip into a project's documents.
import { manifestLine } from '../../manifest/said.js';
import type { Command } from 'commander';
import { mirror, normaliseRemotePath, planMirror, type MirrorOptions } from '../../../jobs/mirror.js';
import { exitCodeFor, targetLine } from '../output.js';
import { Reply } from '../reply.js';
import { EXIT } from '../exit-codes.js';
import { safeText, visible } from '../../text.js';
import { heard, jobFromFlags, lockedOr, openJobDeps, type RunOptions } from '../shared.js';
import { PlanOutput } from '../plan-output.js';
import { resolveProject } from '../../backends/project/named.js';

export async function mirrorAction(source: string, opts: Record<string, unknown>, cmd: Command): Promise<void> {
  const loaded = jobFromFlags('mirror', { source }, opts);
  const dryRun = opts.dryRun === true;
  if (opts.wait && dryRun) process.stderr.write('ferry: --wait does nothing with --dry-run: nothing is uploaded, so there is nothing to process\n');
  process.exitCode = await runMirrorCommand(cmd, heard(loaded.mirror), { rps: loaded.rps, state: loaded.state, reply: Reply.to(opts, loaded.statsIntervalMs), dryRun });
}


/** Shared by `mirror`, `jobs resume` and `run`. */
export async function runMirrorCommand(cmd: Command, options: MirrorOptions, run: RunOptions): Promise<number> {
  const deps = openJobDeps(cmd, options.concurrency, run);
  const { client, store, concurrency } = deps;
  try {
    options = { ...options, project: await resolveProject(client, options.project) };
    if (run.dryRun) {
      const out = new PlanOutput(run.reply, 'upload');
      const plan = await planMirror(options, { client, store }, out.item);
      const { notes, ...rest } = plan;
      const fields = out.transferFields(rest);
      // What the source says of how it was read goes with the problems, as a run says it.
      fields.problems = [...notes.map((reason) => ({ key: '(source)', reason })), ...(fields.problems as unknown[])];
      fields.target = client.target;
      // Where the run would write, as a newcomer checks it: the project a name resolved to, by id and name, and the folder.
      const name = await client.projects.get(options.project).then((p) => p.name ?? undefined, () => undefined);
      const folder = `/${normaliseRemotePath(options.to)}`;
      fields.project = { id: options.project, ...(name !== undefined ? { name } : {}) };
      fields.folder = folder;
      out.finish(
        EXIT.ok,
        fields,
        out.transferHead(plan, {
          target: targetLine('mirror', client.target),
          into: `project ${name !== undefined ? `"${visible(name)}" (${options.project})` : options.project}, folder ${visible(folder)}`,
          moved: `folders to create ${plan.foldersToCreate}`,
          // A note that is a warning says so once, not as `note: warning:`.
          said: [...(plan.manifest ? [manifestLine(plan.manifest)] : []), ...notes.map((note) => (note.startsWith('warning: ') ? safeText(note) : `note: ${safeText(note)}`))],
          problem: { one: 'problem', many: 'problems' },
        }),
      );
      return EXIT.ok;
    }
    const summary = await mirror(options, { client, store, concurrency, display: run.reply.display });
    run.reply.summary(summary, { reopen: store.reopenFlags });
    return exitCodeFor(summary);
  } catch (err) {
    return lockedOr(err, run.reply);
  } finally {
    await deps.close();
  }
}

