// The `ferry` command.
import { Command, CommanderError, Option } from 'commander';
import { ConfigurationError, FerryError, AuthenticationError, AbortedError } from '../api/errors.js';
import { EXIT } from './exit-codes.js';
import { SourceError } from '../sources/types.js';
import { JobAbortedError } from '../runner/job.js';
import { printJsonError } from './output.js';
import { visible } from '../sources/names.js';
import { registerApi } from './commands/api.js';
import { registerDoctor } from './commands/doctor.js';
import { registerEmulator } from './commands/emulator.js';
import { registerMirror } from './commands/mirror.js';
import { registerJobs } from './commands/jobs.js';
import { registerRun } from './commands/run.js';
import { registerDemo } from './commands/demo.js';
import { registerUpload } from './commands/upload.js';
import { registerPlaybooks } from './commands/playbooks.js';
import { registerPull } from './commands/pull.js';
import { registerMigrate } from './commands/migrate.js';

export interface GlobalOptions {
  profile?: string;
  config?: string;
  logLevel?: string;
}

export function buildProgram(): Command {
  const program = new Command('ferry')
    .description('Bulk sync and migration for the document, playbook and assistant service')
    .version('0.1.0')
    .option('-p, --profile <name>', 'connection profile (default: FERRY_PROFILE or the config file default)')
    .option('--config <file>', 'config file with profiles (default: FERRY_CONFIG or ~/.config/ferry/config.yaml)')
    .addOption(new Option('--log-level <level>', 'log level (default: FERRY_LOG_LEVEL or info)').choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']))
    .showHelpAfterError()
    .exitOverride();
  registerApi(program);
  registerDoctor(program);
  registerMirror(program);
  registerUpload(program);
  registerPlaybooks(program);
  registerPull(program);
  registerMigrate(program);
  registerJobs(program);
  registerRun(program);
  registerEmulator(program);
  registerDemo(program);
  return program;
}

/** Runs the command line and resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (err) {
    const code = reportError(err);
    // Help and --version print text by request; every other exit answers --json with one object.
    const helpOrVersion = err instanceof CommanderError && err.exitCode === 0;
    if (argv.includes('--json') && !helpOrVersion) printJsonError(code, err instanceof Error ? err.message : String(err), { kind: errorKind(err) });
    return code;
  }
}

export function reportError(err: unknown): number {
  if (err instanceof CommanderError) {
    // Help and version end here too, with code 0.
    return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  const message = err instanceof Error ? err.message : String(err);
  // Messages may quote names (paths, zip entries): shown with their controls made visible.
  process.stderr.write(`ferry: ${visible(message)}\n`);
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
