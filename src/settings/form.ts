// A command line's flags written as the job file that says the same: one form, read by one loader
// (jobs/definition.ts), whether it came from flags, a job file or a resumed run's record. Each
// flag's text is read here by its kind, so that a wrong one is named by its flag (exit 2).
import { ConfigurationError } from '../errors.js';
import { visible } from '../text.js';
import { Unreadable, type FormValue } from './kinds.js';
import { SETTINGS, type Setting, type SettingName } from './declared.js';

/** A job file's content: keys as the file writes them, nested where a key is dotted. */
export type Form = Record<string, unknown>;

/** commander's name for a flag's value: `--dry-run` -> dryRun, `--no-lock` -> lock. */
export function attributeOf(flag: string): string {
  return flag.replace(/^--(no-)?/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** The value under a dotted key. */
export function getPath(form: Form, key: string): unknown {
  let at: unknown = form;
  for (const part of key.split('.')) at = at && typeof at === 'object' ? (at as Form)[part] : undefined;
  return at;
}

export function setPath(form: Form, key: string, value: unknown): void {
  const parts = key.split('.');
  let at = form;
  for (const part of parts.slice(0, -1)) at = (at[part] ??= {}) as Form;
  at[parts[parts.length - 1]!] = value;
}

/** The range's complaint about a value, or undefined when it holds (or the setting has none). */
export function outOfRange(s: Setting, value: FormValue): string | undefined {
  if (!s.range) return undefined;
  const n = s.kind.value(value);
  if (typeof n !== 'number') return undefined;
  if ((s.range.min !== undefined && n < s.range.min) || (s.range.max !== undefined && n > s.range.max)) return s.range.words;
  return undefined;
}

/** One flag's text as its job-file value; refused naming the flag. */
export function readFlag(s: Setting, text: string): FormValue {
  const flag = s.flag ?? s.key;
  let value: FormValue;
  try {
    value = s.kind.fromFlag(text);
  } catch (err) {
    if (!(err instanceof Unreadable)) throw err;
    if (err.detail !== undefined) throw new ConfigurationError(`${flag} "${visible(text)}": ${err.detail}`);
    throw new ConfigurationError(s.kind.said === 'must-be' ? `${flag} must be ${err.expected}, not "${visible(text)}"` : `${flag} "${visible(text)}" is not ${err.expected}`);
  }
  const range = outOfRange(s, value);
  if (range !== undefined) {
    const why = s.range?.why ? `: ${s.range.why}` : '';
    throw new ConfigurationError(s.kind.said === 'must-be' ? `${flag} must be ${range}, not "${visible(text)}"${why}` : `${flag} "${visible(text)}" is ${s.range?.said ?? `outside ${range}`}${why}`);
  }
  return value;
}

/**
 * The settings a command was given, as its job file would write them. `opts` is what commander
 * parsed; a setting not given is left out, so that the loader applies its default as it does for a
 * job file. Two flags of one key (`--projects` and `--all-projects`) cannot be given together.
 */
export function formFromFlags(names: readonly SettingName[], opts: Record<string, unknown>): Form {
  const form: Form = {};
  const from = new Map<string, string>();
  const put = (s: Setting, value: unknown) => {
    const other = from.get(s.key);
    if (other !== undefined && other !== s.flag) throw new ConfigurationError(`${other} and ${s.flag} cannot be given together`);
    from.set(s.key, s.flag!);
    setPath(form, s.key, value);
  };
  for (const name of names) {
    const s = SETTINGS[name];
    if (!s.flag || s.runFlag) continue;
    const raw = opts[attributeOf(s.flag)];
    if (raw === undefined) continue;
    if (s.negates) {
      // commander sets true when --no-X is not given: only false is said.
      if (raw === false) put(s, false);
    } else if (typeof raw === 'boolean') {
      if (raw) put(s, s.asForm ?? true);
    } else if (Array.isArray(raw)) {
      if (raw.length === 0) continue;
      const read = raw.map((t) => readFlag(s, String(t)));
      put(s, read.every(Array.isArray) ? read.flat() : Object.assign({}, ...read));
    } else {
      put(s, readFlag(s, String(raw)));
    }
  }
  return form;
}

/** The name a message gives a setting: its flag on the command line, its key in a job file. */
export function nameOf(s: Setting, origin: 'flags' | 'file'): string {
  return origin === 'flags' ? (s.flag ?? s.elsewhere ?? s.key) : s.key;
}
