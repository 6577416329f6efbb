// The option tables of docs/cli.md, written from the program itself: every flag of every command,
// with its default and range as --help says them, its job-file key, and whether `ferry jobs resume`
// keeps it. `npm run docs:options` writes them; test/cli/option-tables.test.ts holds the file to them.
import type { Command, Option } from 'commander';
import { settingOf } from './settings-flags.js';
import { JOB_COMMANDS, JOB_KINDS, JOB_SETTINGS, RESUMABLE_JOBS, SETTINGS, keptOnResume, type JobKind, type Setting } from '../settings/declared.js';

export const BEGIN = '<!-- options:begin (written by npm run docs:options; do not edit by hand) -->';
export const END = '<!-- options:end -->';

/** A default as a table shows it: the declaration's, else commander's, else the one its help says in words. */
export function defaultOf(option: Option): string {
  const s = settingOf(option);
  if (s) return s.default ?? s.unset ?? '';
  if (option.defaultValue !== undefined && !option.negate) return option.defaultValueDescription ?? (typeof option.defaultValue === 'string' ? option.defaultValue : JSON.stringify(option.defaultValue));
  return /\(default:? (.*?)[;)]/.exec(option.description)?.[1] ?? '';
}

/** A range as a table shows it: the declaration's words, or the choices. */
export function rangeOf(option: Option): string {
  const s = settingOf(option);
  if (s?.range) return s.range.words;
  return option.argChoices ? option.argChoices.join(', ') : '';
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ').replace(/</g, '&lt;');

const keyCell = (s: Setting | undefined) => (s === undefined ? '' : s.runFlag ? '(a flag of `ferry run`)' : `\`${s.key}\``);
const resumeCell = (s: Setting | undefined, kind: JobKind) => (s !== undefined && keptOnResume(kind, s) ? 'kept' : '');

function table(path: string, cmd: Command, jobKind: JobKind | undefined): string {
  const rows = cmd.options
    .filter((o) => !o.hidden)
    .map((o) => {
      const s = settingOf(o);
      return `| \`${o.flags}\` | ${cell(defaultOf(o))} | ${cell(rangeOf(o))} |${jobKind !== undefined ? ` ${keyCell(s)} | ${resumeCell(s, jobKind)} |` : ''} ${cell(s?.help ?? o.description)} |`;
    });
  // A job file's keys that no flag of the command gives: its arguments, and what global flags say.
  if (jobKind !== undefined) {
    for (const name of JOB_SETTINGS[jobKind]) {
      const s: Setting = SETTINGS[name];
      if (s.flag === undefined) rows.push(`| ${s.elsewhere?.startsWith('-') ? `\`${s.elsewhere}\` (global)` : s.elsewhere ?? ''} | ${s.default ?? ''} | ${s.range?.words ?? ''} | ${keyCell(s)} | ${resumeCell(s, jobKind)} | ${cell(s.help)} |`);
    }
  }
  if (rows.length === 0) return '';
  const head = jobKind !== undefined ? '| Flag | Default | Range | Job file key | On resume | What |\n|---|---|---|---|---|---|' : '| Flag | Default | Range | What |\n|---|---|---|---|';
  return `### \`ferry ${path}\`${jobKind !== undefined ? ` (job file: \`job: ${jobKind}\`${RESUMABLE_JOBS.includes(jobKind) ? '' : '; not taken up by `ferry jobs resume`: run it again'})` : ''}\n\n${head}\n${rows.join('\n')}\n`;
}

/** The tables of every command and subcommand, in the program's order. */
export function optionTables(program: Command): string {
  const kindOf = new Map(JOB_KINDS.map((k) => [JOB_COMMANDS[k], k]));
  const out: string[] = [];
  const walk = (cmd: Command, path: string[]) => {
    for (const sub of cmd.commands) {
      if (sub.name() === 'help') continue;
      const here = [...path, sub.name()];
      const t = table(here.join(' '), sub, kindOf.get(here.join(' ')));
      if (t) out.push(t);
      walk(sub, here);
    }
  };
  walk(program, []);
  return `${BEGIN}\n\n${out.join('\n')}\n${END}`;
}

/** The file with its tables replaced (or appended, the first time). */
export function withTables(doc: string, tables: string): string {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start >= 0 && end > start) return doc.slice(0, start) + tables + doc.slice(end + END.length);
  return `${doc.trimEnd()}\n\n## Every flag: its default, its range, its job-file key\n\nEach command's flags as \`--help\` gives them. A job kind's table names the key its job file takes for each flag (\`ferry run FILE\`; a dotted key is nested, \`ocr.engine\` is \`ocr: { engine: … }\`), and which settings \`ferry jobs resume\` keeps from the run it continues (the others are the resuming command's own: its lease, its window, how it reports).\n\n${tables}\n`;
}
