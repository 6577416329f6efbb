// Every `--json` answer of every command, at every exit, is one JSON object on one line that opens
// with the same three fields: {command, status, exitCode, …}. docs/json-output.schema.json says
// what follows them per command; test/cli/json-envelope.test.ts holds every command to it.
import type { Command } from 'commander';

/** The command line being answered, as its words: `mirror`, `playbooks export`, `migrate verify`. */
let current = 'ferry';

export function setCommand(name: string): void {
  current = name;
}

export function commandName(): string {
  return current;
}

/** A command's words from commander's tree: the action's command and its parents, root left out. */
export function commandPath(cmd: Command): string {
  const words: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) words.unshift(c.name());
  return words.join(' ');
}

/** Global options that take a value: their value is not a command word. */
const VALUED = new Set(['-p', '--profile', '--config', '--log-level', '--log-file', '--metrics-file', '--pushgateway']);

/**
 * The command words of an argv the parser refused (no action ran, so commander never named it):
 * the leading words that are commands of `program`, options and their values passed over.
 */
export function commandFromArgv(program: Command, argv: readonly string[]): string {
  const words: string[] = [];
  let at: Command = program;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') break;
    if (arg.startsWith('-')) {
      if (VALUED.has(arg)) i++;
      continue;
    }
    const sub = at.commands.find((c) => c.name() === arg || c.aliases().includes(arg));
    if (!sub) break;
    words.push(sub.name());
    at = sub;
  }
  return words.length ? words.join(' ') : 'ferry';
}

/** The answer's first three fields, then the body's (which cannot override them). */
export function envelope(status: string, exitCode: number, body: Record<string, unknown> = {}): Record<string, unknown> {
  const { command: _c, status: _s, exitCode: _e, ...rest } = body;
  return { command: current, status, exitCode, ...rest };
}

export function writeEnvelope(status: string, exitCode: number, body: Record<string, unknown> = {}, out: NodeJS.WritableStream = process.stdout): void {
  out.write(`${JSON.stringify(envelope(status, exitCode, body))}\n`);
}

/** A phrase as a key of a JSON answer: "missing on the service" -> missingOnTheService. */
export function camelKey(phrase: string): string {
  return phrase.replace(/ (\w)/g, (_m, c: string) => c.toUpperCase());
}
