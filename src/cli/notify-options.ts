// --notify URL (or `notify` in the job file or the profile): checked before the job starts (not an
// http(s) URL: exit 2, its path never shown), the start pinged, every run's summary kept for the
// end's ping (src/runner/notify.ts, loaded only when a URL is given).
import type { Command } from 'commander';
import { ConfigurationError } from '../errors.js';
import { observeRuns, type JobSummary } from '../runner/job.js';
import { commandPath } from './envelope.js';
import { exitCodeFor, summaryEnvelope } from './output.js';
import { fromSettings, JOB_COMMANDS } from './metrics-options.js';
import type { GlobalOptions } from './global-options.js';

export interface RunNotify {
  /** The end's ping: success or /fail by the exit code, the runs' summaries as the body; its warnings. */
  finish(end: { exitCode: number; status: string }): Promise<string[]>;
}

export async function startNotify(action: Command, g: GlobalOptions): Promise<RunNotify | undefined> {
  const command = commandPath(action);
  if (!JOB_COMMANDS[command]) {
    if (g.notify === undefined) return undefined;
    throw new ConfigurationError(`--notify applies to the commands that run a job (${Object.keys(JOB_COMMANDS).join(', ')}), not to ferry ${command}`);
  }
  const text = g.notify ?? fromSettings(action, g).notify;
  if (text === undefined) return undefined;
  const url = checkNotify(text);
  // The HTTP client of the pings loads only for a run that asks for them.
  const { Notifier } = await import('../runner/notify.js');
  const notifier = new Notifier(url);
  const runs: JobSummary[] = [];
  const stop = observeRuns({ finished: (summary) => void runs.push(summary) });
  await notifier.start();
  return {
    async finish(end) {
      stop();
      const body = {
        command,
        ...end,
        // One run: its summary as --json gives it; several (upload rounds, jobs of a job file): each.
        ...(runs.length === 1 ? { run: summaryEnvelope(runs[0]!, exitCodeFor(runs[0]!)) } : { runs: runs.map((r) => summaryEnvelope(r, exitCodeFor(r))) }),
      };
      await notifier.finish(end.exitCode, body);
      return notifier.warnings;
    },
  };
}

/** An http(s) URL; what is wrong is said without its path (a ping URL carries its secret there). */
function checkNotify(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigurationError('--notify is not a URL: give the ping URL, e.g. https://hc-ping.com/<uuid>');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigurationError(`--notify ${url.protocol}//… is not an http(s) URL`);
  if (url.username || url.password) throw new ConfigurationError(`--notify ${url.protocol}//${url.host}/…: credentials in the URL are not sent; put the secret in the path, as ping services do`);
  return url;
}
