// The one reader of settings' values. A form in (a command's flags as settings/form.ts wrote them,
// a job file, a resumed run's record), each setting's typed value out: its declared default when
// not given, a path resolved against where the form came from, and the cross-checks declared in
// declared.ts held. The jobs (jobs/definition.ts), scan and check all read through it, so that a
// setting means one thing whichever door it came in by, and a mistake is named as that door names
// it (a flag on the command line, a key in a file).
import { resolve } from 'node:path';
import { ConfigurationError } from '../errors.js';
import { CROSS_CHECKS, NOT_OPTIONS, SETTINGS, type OptionValues, type SettingName, type ValueOf, type Values } from './declared.js';
import { formFromFlags, getPath, nameOf, type Form } from './form.js';
import { readFilterFile } from '../config/filter-file.js';
import type { PathPatterns } from '../sync/patterns.js';
import type { SizeAgeLimits } from '../sync/filters.js';

export interface FormOrigin {
  /** How messages name a setting: its flag, or its key. */
  names: 'flags' | 'file';
  /** Relative paths are relative to this folder (a job file's); else left as given. */
  base?: string | undefined;
  /** Put before every refusal: "job file x.yaml: ". */
  where?: string;
}

export class SettingValues {
  constructor(
    readonly form: Form,
    private readonly origin: FormOrigin,
  ) {}

  /** What every refusal starts with ("job file x.yaml: "), for a message made elsewhere. */
  get where(): string {
    return this.origin.where ?? '';
  }

  /** Given in the form (a default is not). */
  given(name: SettingName): boolean {
    return getPath(this.form, SETTINGS[name].key) !== undefined;
  }

  /** The form's value, or the declared default, as written (for messages). */
  text(name: SettingName): string | undefined {
    const s = SETTINGS[name];
    const v = getPath(this.form, s.key) ?? s.default;
    return v === undefined ? undefined : String(v);
  }

  /** The value as the code uses it (a duration in ms, a size in bytes…), the default when not given. */
  value<N extends SettingName>(name: N): ValueOf<N> | undefined {
    const s = SETTINGS[name];
    const raw = getPath(this.form, s.key) ?? s.default;
    if (raw === undefined) return undefined;
    const v = s.kind.value(raw as never);
    if ('isPath' in s.kind && typeof v === 'string' && this.origin.base !== undefined) return resolve(this.origin.base, v) as ValueOf<N>;
    return v as ValueOf<N>;
  }

  /** The values of these settings, by name (their cross-checks are the caller's to hold, once: `check`). */
  values<const Ns extends readonly SettingName[]>(names: Ns): Values<Ns> {
    const out: Record<string, unknown> = {};
    for (const name of names) {
      const v = this.value(name);
      if (v !== undefined) out[name] = v;
    }
    return out as Values<Ns>;
  }

  /** The values a job's options carry as they are: those of `names` but the ones made into something else (NOT_OPTIONS). */
  options<const Ns extends readonly SettingName[]>(names: Ns): OptionValues<Ns> {
    const values = this.values(names) as Record<string, unknown>;
    for (const name of NOT_OPTIONS) delete values[name];
    return values as OptionValues<Ns>;
  }

  /** How a message names the setting here. */
  name(name: SettingName): string {
    return nameOf(SETTINGS[name], this.origin.names);
  }

  reject(message: string): never {
    throw new ConfigurationError(`${this.origin.where ?? ''}${message}`);
  }

  /** The declared cross-checks whose settings are all among `names` (declared.ts, CROSS_CHECKS). */
  check(names: readonly SettingName[]): void {
    const among = (...ns: SettingName[]) => ns.every((n) => names.includes(n));
    for (const c of CROSS_CHECKS) {
      if ('order' in c) {
        const [low, high] = c.order;
        if (!among(low, high)) continue;
        const a = this.value(low);
        const b = this.value(high);
        if (typeof a === 'number' && typeof b === 'number' && a > b) this.reject(`${this.name(low)} ${this.text(low)} ${c.said} ${this.name(high)} ${this.text(high)}: ${c.why}`);
      } else if ('needs' in c) {
        if (among(c.needs, c.on) && this.present(c.needs) && !this.present(c.on)) this.reject(`${this.name(c.needs)} needs ${this.name(c.on)}${c.why ? `: ${c.why}` : ''}`);
      } else if (among(c.apart, ...c.from) && this.present(c.apart) && c.from.some((n) => this.present(n))) {
        const others = c.from.map((n) => this.name(n));
        this.reject(`${this.name(c.apart)} cannot be given with ${others.slice(0, -1).join(', ')}${others.length > 1 ? ' or ' : ''}${others.at(-1)}: ${c.why}`);
      }
    }
  }

  /** Given, and saying something: not off, not an empty list. */
  private present(name: SettingName): boolean {
    const v = getPath(this.form, SETTINGS[name].key);
    return v !== undefined && v !== false && !(Array.isArray(v) && v.length === 0);
  }
}

/**
 * The settings of a command that is no job kind (scan, check: OTHER_SETTINGS), read as a job's
 * are: each flag by its kind, the cross-checks held, every value typed, the patterns and limits
 * made. A setting added to the command's list arrives here by its name with nothing else to write.
 */
export function settingsOf<const Ns extends readonly SettingName[]>(names: Ns, flags: Record<string, unknown>): OptionValues<Ns> & PathPatterns & SizeAgeLimits {
  const v = new SettingValues(formFromFlags(names, flags), { names: 'flags' });
  v.check(names);
  return { ...v.options(names), ...filtersFrom(v) };
}

/** Patterns or a rules file, and the size and age limits, as every command that walks a source takes them (mirror, upload, pull, scan, check). */
export function filtersFrom(v: SettingValues): PathPatterns & SizeAgeLimits {
  const filterFrom = v.value('filterFrom');
  const limits = { minSize: v.value('minSize'), maxSize: v.value('maxSize'), minAge: v.value('minAge'), maxAge: v.value('maxAge') };
  return {
    ...(filterFrom !== undefined ? { include: [], exclude: [], rules: readFilterFile(filterFrom, `${v.where}${v.name('filterFrom')} ${v.text('filterFrom')}`) } : { include: v.value('include') ?? [], exclude: v.value('exclude') ?? [] }),
    ...(Object.fromEntries(Object.entries(limits).filter(([, x]) => x !== undefined)) as SizeAgeLimits),
  };
}
