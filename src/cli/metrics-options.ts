// --metrics-file and --pushgateway: checked before the job starts (a path that cannot be written,
// a folder, an address that is not one: exit 2, nothing sent), then the run's metrics started
// (src/runner/metrics.ts). Loaded only when one of them is given.
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { basename, dirname, extname, resolve } from 'node:path';
import type { Command } from 'commander';
import { ConfigurationError } from '../errors.js';
import { hostOf } from '../api/target.js';
import { resolveAddress } from '../api/addresses.js';
import { resolveSettings } from '../config/profile.js';
import type { RunMetrics } from '../runner/metrics.js';
import { commandPath } from './envelope.js';
import { exitCodeFor, summaryEnvelope } from './output.js';
import { statsFlag } from './options.js';
import { visible } from '../text.js';
import type { GlobalOptions } from './global-options.js';
import { loadDefinition, type LoadedDefinition } from '../../jobs/definition.js';

/** The commands that run a job, and the job kind each reports before its run says so. */
export const JOB_COMMANDS: Record<string, string> = {
  mirror: 'mirror',
  upload: 'upload',
  pull: 'pull',
  migrate: 'migrate',
  'playbooks export': 'playbooks-export',
  'playbooks import': 'playbooks-import',
  'playbooks backup': 'playbooks-backup',
  run: 'run',
  'jobs resume': 'resume',
};

/** What the job file and the profile say, for the commands that run a job (read errors are the job's to report). */
export function fromSettings(action: Command, g: GlobalOptions): { metricsFile?: string | undefined; pushgateway?: string | undefined; notify?: string | undefined; definition?: LoadedDefinition | undefined } {
  const command = commandPath(action);
  if (!JOB_COMMANDS[command]) return {};
  let definition: LoadedDefinition | undefined;
  if (command === 'run' && action.args[0]) {
    try {
      definition = loadDefinition(action.args[0]);
    } catch {
      definition = undefined;
    }
  }
  let profile: { pushgateway?: string | undefined; notify?: string | undefined } = {};
  try {
    profile = resolveSettings({ profile: definition?.profile ?? g.profile, configFile: g.config }).profile;
  } catch {
    profile = {};
  }
  return { metricsFile: definition?.metricsFile, pushgateway: definition?.pushgateway ?? profile.pushgateway, notify: definition?.notify ?? profile.notify, definition };
}

/** The run's metrics when a flag, the job file or the profile asks for them; undefined otherwise. */
export async function startRunMetrics(action: Command, g: GlobalOptions): Promise<RunMetrics | undefined> {
  const command = commandPath(action);
  const kind = JOB_COMMANDS[command];
  if (!kind) {
    if (!g.metricsFile && !g.pushgateway) return undefined;
    throw new ConfigurationError(`--metrics-file and --pushgateway apply to the commands that run a job (${Object.keys(JOB_COMMANDS).join(', ')}), not to ferry ${command}`);
  }
  // The flag, then the job file, then the profile.
  const settings = fromSettings(action, g);
  const metricsFile = g.metricsFile ?? settings.metricsFile;
  const gatewayUrl = g.pushgateway ?? settings.pushgateway;
  if (metricsFile === undefined && gatewayUrl === undefined) return undefined;
  // Said by the name the user gave it: the flag, or the job file's or the profile's key.
  const where = g.metricsFile !== undefined ? '--metrics-file' : settings.definition?.metricsFile !== undefined ? 'the job file\'s metricsFile:' : 'the profile\'s metricsFile:';
  const file = metricsFile === undefined ? undefined : checkMetricsFile(metricsFile, where);
  const pushgateway = gatewayUrl === undefined ? undefined : checkPushgateway(gatewayUrl);
  const opts = action.opts<{ project?: string; playbook?: string; stats?: string; to?: string }>();
  // prom-client is loaded only by a run that asks for metrics.
  const { RunMetrics } = await import('../runner/metrics.js');
  const metrics = new RunMetrics({
    file,
    pushgateway,
    intervalMs: statsFlag(opts.stats),
    jobKind: kind,
    // A job file's name names the job (`ferry run nightly-mirror.yaml`: nightly-mirror).
    jobName: command === 'run' && action.args[0] ? basename(action.args[0], extname(action.args[0])) : undefined,
    // A job file names its own tenant (a migration's: the target) and project.
    tenant: tenantOf(command === 'migrate' ? opts.to : (settings.definition?.profile ?? g.profile), g.config),
    project: opts.project ?? (command === 'pull' ? action.args[0] : projectOf(settings.definition)),
    playbook: opts.playbook,
    ending: (summary) => {
      const exitCode = exitCodeFor(summary);
      return { exitCode, status: String(summaryEnvelope(summary, exitCode).status) };
    },
  });
  try {
    await metrics.start();
  } catch (err) {
    throw new ConfigurationError(`${where} ${visible(file ?? '')} cannot be written: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return metrics;
}

/** A file in a folder that can be written (made when missing, as --log-file's is), and not a folder itself; `where` names the setting. */
function checkMetricsFile(path: string, where: string): string {
  const file = resolve(path);
  // A path through a file (ENOTDIR) is said below, as a folder that cannot be made.
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(file, { throwIfNoEntry: false });
  } catch {
    st = undefined;
  }
  if (st?.isDirectory()) throw new ConfigurationError(`${where} ${visible(path)} is a folder: name the file to write (e.g. ${visible(path.replace(/\/$/, ''))}/ferry.prom)`);
  try {
    mkdirSync(dirname(file), { recursive: true });
    accessSync(dirname(file), constants.W_OK);
  } catch (err) {
    throw new ConfigurationError(`${where} ${visible(path)}: its folder ${visible(dirname(file))} cannot be made or written (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return file;
}

function checkPushgateway(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigurationError(`--pushgateway ${visible(text)} is not a URL: give the Pushgateway's address, e.g. http://pushgateway:9091`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigurationError(`--pushgateway ${visible(text)} is not an http(s) URL`);
  return url.toString().replace(/\/$/, '');
}

/** The tenant's host, as far as the profile says it before anything is sent (for a run that never starts). */
/** The project a job file's job works on, if it has one. */
function projectOf(definition: LoadedDefinition | undefined): string | undefined {
  const d = definition?.definition;
  return typeof d?.project === 'string' ? d.project : undefined;
}

function tenantOf(profile: string | undefined, configFile: string | undefined): string | undefined {
  try {
    const settings = resolveSettings({ profile, configFile });
    return hostOf(resolveAddress(settings.clientOptions.address).baseUrl);
  } catch {
    return undefined;
  }
}
