// The `ferry` command.
import type { GlobalOptions } from './global-options.js';
import { nearest } from '../nearest.js';
import { Command, CommanderError, Help, Option } from 'commander';
import { ConfigurationError, FerryError, AuthenticationError, AbortedError } from '../api/errors.js';
import { EXIT } from './exit-codes.js';
import { SourceError } from '../sync/types.js';
import { JobAbortedError } from '../runner/job.js';
import { Reply } from './reply.js';
import { commandFromArgv, commandName, commandPath, setCommand, writeEnvelope } from './envelope.js';
import { onImmediateExit } from '../runner/signals.js';
import { safeText, visible } from '../text.js';
import { userMessage } from './lease-words.js';
import { parseListingLag } from '../api/listing-lag.js';
import { answersInJson } from './reply-mode.js';

/**
 * Each command's module, loaded only when that command runs: start-up pays for commander and the
 * one command asked for, not for the emulator, SQLite and the validators of every other command.
 * `--version` loads none; the top-level help (no command named) loads them all.
 */
type Register = (program: Command) => void;
const COMMANDS: Record<string, () => Promise<Register>> = {
  // Move content
  mirror: async () => (await import('./commands/mirror.js')).registerMirror,
  upload: async () => (await import('./commands/upload.js')).registerUpload,
  pull: async () => (await import('./commands/pull.js')).registerPull,
  migrate: async () => (await import('./commands/migrate.js')).registerMigrate,
  run: async () => (await import('./commands/run.js')).registerRun,
  // Look around
  ls: async () => (await import('./commands/ls.js')).registerLs,
  projects: async () => (await import('./commands/projects.js')).registerProjects,
  metadata: async () => (await import('./commands/metadata.js')).registerMetadata,
  check: async () => (await import('./commands/check.js')).registerCheck,
  scan: async () => (await import('./commands/scan.js')).registerScan,
  report: async () => (await import('./commands/report.js')).registerReport,
  watch: async () => (await import('./commands/watch.js')).registerWatch,
  jobs: async () => (await import('./commands/jobs.js')).registerJobs,
  // Playbooks
  playbooks: async () => (await import('./commands/playbooks.js')).registerPlaybooks,
  // Operate
  doctor: async () => (await import('./commands/doctor.js')).registerDoctor,
  lock: async () => (await import('./commands/lock.js')).registerLock,
  config: async () => (await import('./commands/config.js')).registerConfig,
  emulator: async () => (await import('./commands/emulator.js')).registerEmulator,
  demo: async () => (await import('./commands/demo.js')).registerDemo,
  completion: async () => (await import('./commands/completion.js')).registerCompletion,
  api: async () => (await import('./commands/api.js')).registerApi,
};

/** `ferry --help` groups the commands by task, as gh does, in the order COMMANDS lists them. */
const HELP_GROUPS: Record<string, string> = {
  'Move content:': 'mirror upload pull migrate run',
  'Look around:': 'ls projects metadata check scan report watch jobs',
  'Playbooks:': 'playbooks',
  'Operate:': 'doctor lock config emulator demo completion api',
};

const EXAMPLES = `
Examples:
  # a folder, a zip or a tar into a project (named), then wait for processing
  $ ferry mirror ./share --project "Contoso onboarding" --wait
  # what processing did with the last run's documents, and why
  $ ferry report --run last
  # a job file (any kind: config/jobs), the way cron runs ferry
  $ ferry run config/jobs/nightly-mirror.yaml --json

Each command's flags: ferry COMMAND --help.
Every flag, exit code and JSON field: docs/cli.md.`;

/** Global options that take a value: their value is not the command's name. */
const GLOBAL_WITH_VALUE = new Set(['-p', '--profile', '--config', '--log-level', '--log-file', '--metrics-file', '--pushgateway', '--notify']);

/**
 * The command an argument list names (`help X` names X), 'version' for a bare --version/-V,
 * or undefined when it names none (top-level help, or a name commander will refuse).
 */
export function commandNamed(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') return undefined;
    if (GLOBAL_WITH_VALUE.has(arg)) {
      i++;
      continue;
    }
    if (arg === '-V' || arg === '--version') return 'version';
    if (arg.startsWith('-')) continue;
    if (arg === 'help') return commandNamed(argv.slice(i + 1));
    return arg;
  }
  return undefined;
}

/** Whether a global flag without a value is given before the command's own arguments end. */
function globalFlag(argv: readonly string[], short: string, long: string): boolean {
  for (const arg of argv) {
    if (arg === '--') return false;
    if (arg === short || arg === long) return true;
  }
  return false;
}


/** rclone's words, as a user of it types them here: what ferry does instead, as a command. */
const RCLONE_COMMANDS: Record<string, string> = {
  sync: 'ferry has no sync that deletes: `ferry mirror SOURCE --project P` uploads what is new or changed (the service keeps every document for good), `ferry pull PROJECT DIR` downloads',
  copy: '`ferry mirror SOURCE --project P` uploads a folder, zip or tar; `ferry pull PROJECT DIR` downloads a project',
  copyto: '`ferry mirror SOURCE --project P` uploads; `ferry pull PROJECT DIR` downloads',
  move: 'ferry never deletes a source: `ferry mirror SOURCE --project P` uploads',
  lsf: '`ferry ls PROJECT -R` lists what a project holds',
  lsl: '`ferry ls PROJECT -R -l` lists what a project holds, with sizes and dates',
  delete: 'the service keeps every document for good: ferry deletes nothing',
  purge: 'the service keeps every document for good: ferry deletes nothing',
};

const RCLONE_FLAGS: Record<string, string> = {
  '--delete': 'the service keeps every document for good, so ferry never deletes: a file deleted here is reported (`deleted locally since the last run`), its document stays',
  '--delete-after': 'the service keeps every document for good, so ferry never deletes',
  '--delete-during': 'the service keeps every document for good, so ferry never deletes',
  '--delete-excluded': 'the service keeps every document for good, so ferry never deletes',
  '--dry-run': 'ferry mirror, pull and migrate take --dry-run (-n); other commands change nothing',
};

/** A hint for a word rclone knows and ferry does not, when the error names one. */
function rcloneHabit(text: string): string | undefined {
  const command = /^error: unknown command '([^']*)'/.exec(text)?.[1];
  if (command !== undefined && RCLONE_COMMANDS[command]) return `as rclone's \`${command}\`: ${RCLONE_COMMANDS[command]}`;
  const flag = /^error: unknown option '([^'=]*)/.exec(text)?.[1];
  if (flag !== undefined && RCLONE_FLAGS[flag]) return RCLONE_FLAGS[flag];
  return undefined;
}

/**
 * Commander checks required flags before unknown ones, so a misspelt `--projct ID` reads "required
 * option '--project <id>' not specified" and never names the typo. Said instead: the unknown flag,
 * and the known one it is closest to.
 */
export function plainUsageError(text: string, argv: readonly string[], program: Command): string {
  const habit = rcloneHabit(text);
  if (habit) return `${text.replace(/\n$/, '').replace(/\n\(add --help[^)]*\)$/, '')}\n(${habit})\n`;
  const unknownCommand = /^error: unknown command '([^']*)'/.exec(text);
  if (unknownCommand && !/Did you mean/.test(text)) {
    // A word that names a subcommand of another command (`backup`: `playbooks backup`).
    const word = unknownCommand[1] as string;
    const nested = program.commands.flatMap((c) => c.commands.filter((sub) => sub.name() === word).map((sub) => `${c.name()} ${sub.name()}`));
    if (nested.length) return `${text.replace(/\n$/, '')}\n(Did you mean ${nested.map((n) => `ferry ${n}`).join(' or ')}?)\n`;
  }
  if (!/required option .* not specified/.test(text)) return text;
  let cmd = program;
  const known = new Set<string>(['-h', '--help']);
  const learn = (c: Command) => c.options.forEach((o) => [o.long, o.short, o.negate ? o.long : undefined].forEach((f) => f && known.add(f)));
  learn(cmd);
  for (const arg of argv) {
    if (arg.startsWith('-')) continue;
    const sub = cmd.commands.find((c) => c.name() === arg || c.aliases().includes(arg));
    if (!sub) break;
    cmd = sub;
    learn(cmd);
  }
  const unknown = argv.find((a) => a.startsWith('-') && a !== '-' && a !== '--' && !known.has(a.split('=')[0] as string));
  if (unknown === undefined) return missingArgumentFirst(text, argv, cmd, program);
  const flag = unknown.split('=')[0] as string;
  const near = nearest(flag, [...known].filter((k) => k.startsWith('--')));
  // As commander words its own unknown option.
  return `error: unknown option '${visible(flag)}'\n${near ? `(Did you mean ${near}?)\n` : ''}`;
}

/**
 * Commander checks required flags before arguments, so `ferry mirror` alone says "--project"
 * first. What is missing is said in the order it is typed: the source, then the flags.
 */
function missingArgumentFirst(text: string, argv: readonly string[], cmd: Command, program: Command): string {
  if (cmd === program) return text;
  const required = cmd.registeredArguments.filter((a) => a.required);
  if (required.length === 0) return text;
  // Words after the command's own name that are neither flags nor the values of flags that take one.
  const at = argv.lastIndexOf(cmd.name());
  const valued = new Set(cmd.options.filter((o) => o.required || o.optional).flatMap((o) => [o.long, o.short]).filter(Boolean) as string[]);
  let given = 0;
  for (let i = at + 1; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a.startsWith('-')) {
      if (valued.has(a) && !a.includes('=')) i++;
      continue;
    }
    given++;
  }
  const missing = required[given];
  if (!missing) return text;
  return `error: missing required argument '${missing.name()}'${missing.description ? ` (${missing.description})` : ''}, then ${text.replace(/^error: /, '')}`;
}

/** The program with the commands `argv` needs (all of them when `argv` is not given). */
export async function buildProgram(argv?: readonly string[]): Promise<Command> {
  const program = new Command('ferry')
    .description('Bulk sync and migration for the document, playbook and assistant service')
    .version('0.1.0')
    .option('-p, --profile <name>', 'connection profile (default: FERRY_PROFILE or the config file default)')
    .option('--config <file>', 'config file with profiles (default: FERRY_CONFIG or ~/.config/ferry/config.yaml)')
    .addOption(new Option('--log-level <level>', "log level (default: FERRY_LOG_LEVEL, else the profile's logLevel, else warn for jobs and info otherwise)").choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']))
    .addOption(new Option('-v, --verbose', 'log at debug level (as --log-level debug)').conflicts('quiet'))
    .option('-q, --quiet', 'log errors only and show no progress')
    .option('--log-file <file>', 'append the log to this file (JSON lines) instead of writing it to stderr')
    .option('--metrics-file <file>', "job commands: write the run's Prometheus metrics to this file (node_exporter's textfile collector), atomically, at each --stats interval and at the end")
    .option('--pushgateway <url>', "job commands: push the run's Prometheus metrics to this Pushgateway at the end (grouped by job name and instance)")
    .option('--notify <url>', 'job commands: POST URL/start at the start, URL (success, or a limit: exit 8) or URL/fail with the summary at the end (healthchecks.io style; the path is never shown)')
    .option('--listing-lag <duration>', "the longest the service takes to list a new item (default: FERRY_LISTING_LAG, else the profile's listingLag, else 0); decisions from listings wait it out. `ferry doctor --probe-lag` measures it")
    .option('--allow-http', 'send the client secret and tokens over plain http to a host that is not this machine (default: only https, or http to loopback; also FERRY_ALLOW_HTTP=1); the summary says so')
    // One line that points at --help after a usage error, not the whole help burying the error.
    .showHelpAfterError('(add --help to see every flag)')
    // A required option says so in every command's help (subcommands inherit this).
    .configureHelp({
      optionDescription(option) {
        const text = Help.prototype.optionDescription.call(this, option);
        return option.mandatory ? `${text} (required)` : text;
      },
    })
    .addHelpText('after', EXAMPLES)
    .configureOutput({ outputError: (text, write) => write(plainUsageError(text, argv ?? [], program)) })
    .exitOverride()
    // Every --json answer names its command (envelope.ts); the action's words are known here.
    .hook('preAction', async (_root, action) => {
      setCommand(commandPath(action));
      // A bad --listing-lag is the one thing said, before settings that may be missing too.
      const lag = action.optsWithGlobals<GlobalOptions>().listingLag;
      if (lag !== undefined) parseListingLag(lag, '--listing-lag');
      metrics = await startMetrics(action);
      notify = await startNotifications(action);
    });
  const named = argv === undefined ? undefined : commandNamed(argv);
  if (named === 'version') return program;
  const loaders = named !== undefined && COMMANDS[named] ? [COMMANDS[named]] : Object.values(COMMANDS);
  const registered = new Set<Register>();
  for (const load of loaders) {
    const register = await load();
    if (registered.has(register)) continue;
    registered.add(register);
    register(program);
  }
  for (const [heading, names] of Object.entries(HELP_GROUPS)) {
    for (const name of names.split(' ')) program.commands.find((c) => c.name() === name)?.helpGroup(heading);
  }
  program.commandsGroup('Operate:').helpCommand(true);
  return program;
}

/** Runs the command line and resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const program = await buildProgram(argv);
  // -q: no progress display anywhere (the displays read this switch; loaded only when asked for).
  if (globalFlag(argv, '-q', '--quiet')) (await import('../runner/progress.js')).setQuiet(true);
  // A second Ctrl-C exits at once; under --json it still answers, in the one shape.
  const reply = new Reply(answersInJson(argv));
  if (reply.json) {
    onImmediateExit((sig, code) => writeEnvelope('interrupted', code, { error: `a second ${sig} ended the run at once; what was in flight is settled by the next run (or ferry jobs resume)` }));
  }
  let code: number;
  try {
    await program.parseAsync(argv, { from: 'user' });
    code = typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (err) {
    code = reportError(err);
    // Help and --version print text by request; every other exit answers --json with one object.
    const helpOrVersion = err instanceof CommanderError && err.exitCode === 0;
    if (!helpOrVersion) {
      if (commandName() === 'ferry') setCommand(commandFromArgv(program, argv));
      // Said on stderr by reportError; under --json the one answer too.
      reply.answer('error', code, { error: userMessage(err), kind: errorKind(err) }, () => undefined);
    }
  }
  // The metrics' last word: the command's own exit, whatever ended it (a held lock included).
  if (metrics) {
    for (const warning of await metrics.finish({ exitCode: code, status: statusOfExit(code) })) process.stderr.write(`ferry: warning: ${safeText(warning)}\n`);
  }
  // The ping's too; a receiver that is down is a warning, never another exit code.
  if (notify) {
    for (const warning of await notify.finish({ exitCode: code, status: statusOfExit(code) })) process.stderr.write(`ferry: warning: ${safeText(warning)}\n`);
  }
  return code;
}

/** The run's pings, when --notify (the job file, the profile) asks for them (loaded only then). */
let notify: { finish(end: { exitCode: number; status: string }): Promise<string[]> } | undefined;

async function startNotifications(action: Command): Promise<typeof notify> {
  const g = action.optsWithGlobals<GlobalOptions>();
  return (await import('./notify-options.js')).startNotify(action, g);
}

/** The run's metrics, when --metrics-file or --pushgateway asks for them (loaded only then). */
let metrics: { finish(end: { exitCode: number; status: string }): Promise<string[]> } | undefined;

async function startMetrics(action: Command): Promise<typeof metrics> {
  // A job file or a profile may name them too (the flag wins): read once, for the commands that run a job.
  return (await import('./metrics-options.js')).startRunMetrics(action, action.optsWithGlobals<GlobalOptions>());
}

/** The status an exit code stands for, as the --json answers say it. */
function statusOfExit(code: number): string {
  const byCode: Record<number, string> = { 0: 'succeeded', 1: 'failed', 2: 'error', 3: 'aborted', 4: 'locked', 5: 'timeout', 6: 'exhausted', 7: 'lease-lost', 8: 'limit', 130: 'interrupted', 143: 'interrupted' };
  return byCode[code] ?? 'error';
}

export function reportError(err: unknown): number {
  if (err instanceof CommanderError) {
    // Help and version end here too, with code 0.
    return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  const message = userMessage(err);
  // Messages may quote names (paths, zip entries): shown with their controls made visible.
  process.stderr.write(`ferry: ${safeText(message)}\n`);
  if (err instanceof ConfigurationError || err instanceof SourceError) return EXIT.usage;
  if (err instanceof AuthenticationError || err instanceof AbortedError || err instanceof JobAbortedError) return EXIT.aborted;
  if (err instanceof FerryError) return EXIT.failed;
  // Not one of ours: a bug. Show where.
  if (err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  return EXIT.failed;
}

function errorKind(err: unknown): string {
  if (err instanceof CommanderError || err instanceof ConfigurationError || err instanceof SourceError) return 'usage';
  return err instanceof Error ? err.constructor.name : 'unknown';
}
