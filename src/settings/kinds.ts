// The kinds of value a setting takes, each with its one reader: a duration, a size, a rate, a
// count, a choice… A flag's text and a job file's value go through the same reader, so that a unit
// one setting takes every setting of that kind takes, and a value refused in one place is refused
// with the same words in the other; and each kind yields its typed value (a duration its
// milliseconds, a size its bytes, a rate its timetable), so no caller converts text again, as
// rclone's fs.Duration parses itself. Light: nothing here loads zod (schema.ts does, for job files).
import { isUuid } from '../ids.js';
import { parseDuration, isDuration } from '../duration.js';
import { parseSize } from '../runner/format.js';
import { parseBandwidthLimit, type BandwidthLimit } from '../sync/bandwidth.js';

/** A value a kind cannot read: what it must be instead, in words for a message. */
export class Unreadable extends Error {
  /** `detail`: what exactly is wrong, when the value's own parts can say it (a timetable's slot). */
  constructor(
    readonly expected: string,
    readonly detail?: string,
  ) {
    super(expected);
  }
}

/** A job file's value: what YAML and JSON give. */
export type FormValue = string | number | boolean | string[] | Record<string, unknown>;

export interface Kind<T = unknown> {
  /** The value in words, for help and messages: "a duration like 90s, 30m, 2h or 1d". */
  readonly expected: string;
  /** The argument's name in help: `<duration>`. */
  readonly arg?: string;
  /** How a wrong flag is said: `--x "v" is not …` (most) or `--x must be …, not "v"` (numbers). */
  readonly said: 'is-not' | 'must-be';
  /** A flag's text as a job file writes it (a count becomes a number); throws Unreadable. */
  fromFlag(text: string): FormValue;
  /** A job file's value checked; throws Unreadable. */
  check(value: unknown): void;
  /** A checked value as the code uses it: ms for a duration, bytes for a size; a range is held against it when a number. */
  value(checked: FormValue): T;
}

const DURATION_WORDS = 'a duration like 90s, 30m, 2h or 1d';

function text(value: unknown, expected: string): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') throw new Unreadable(expected);
  return value;
}

/** A duration: 90s, 30m, 2h, 1h30m, 250ms, 1d, 2w, or plain seconds (src/duration.ts). */
export const duration: Kind<number> = durationKind(DURATION_WORDS, '<duration>');
/** An age is a duration, said as one: how long ago a file changed. */
export const age: Kind<number> = durationKind('an age like 90s, 30m, 12h, 7d or 2w', '<age>');

function durationKind(expected: string, arg: string): Kind<number> {
  const read = (value: unknown) => {
    const t = text(value, expected);
    if (!isDuration(t)) throw new Unreadable(expected);
    return t;
  };
  return { expected, arg, said: 'is-not', fromFlag: read, check: read, value: (v) => parseDuration(String(v)) };
}

/** A size: 500, 10K, 1.5M, 2G (K, M, G, T are powers of 1024). */
export const size: Kind<number> = {
  expected: 'a size like 500, 10K, 1.5M or 2G',
  arg: '<size>',
  said: 'is-not',
  fromFlag(t) {
    size.check(t);
    return t;
  },
  check(value) {
    if (Number.isNaN(parseSize(text(value, size.expected)))) throw new Unreadable(size.expected);
  },
  value: (v) => parseSize(String(v)),
};

/** A rate of content bytes per second, or a timetable as rclone writes it ("08:00,512k 19:00,off"). */
export const rate: Kind<BandwidthLimit> = {
  expected: 'a rate above 0, or a timetable like "08:00,512k 19:00,off"',
  arg: '<rate>',
  said: 'is-not',
  fromFlag(t) {
    rate.check(t);
    return t;
  },
  check(value) {
    const t = text(value, rate.expected);
    try {
      parseBandwidthLimit(t, parseSize);
    } catch (err) {
      if (!(err instanceof RangeError)) throw err;
      // A timetable's own words name the slot that is wrong.
      throw new Unreadable(rate.expected, t.includes(',') ? err.message : undefined);
    }
  },
  value: (v) => parseBandwidthLimit(String(v), parseSize),
};

/** A whole number, at least `min`. */
export function count(min = 0): Kind<number> {
  const expected = `a whole number of at least ${min}`;
  const kind: Kind<number> = {
    expected,
    arg: '<n>',
    said: 'must-be',
    fromFlag(t) {
      const n = /^\s*-?\d+\s*$/.test(t) ? Number(t) : Number.NaN;
      kind.check(n);
      return n;
    },
    check(value) {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < min) throw new Unreadable(expected);
    },
    value: (v) => Number(v),
  };
  return kind;
}

/** A number above 0 (requests per second). */
export const positive: Kind<number> = {
  expected: 'a positive number',
  arg: '<n>',
  said: 'must-be',
  fromFlag(t) {
    const n = t.trim() === '' ? Number.NaN : Number(t);
    positive.check(n);
    return n;
  },
  check(value) {
    if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) throw new Unreadable(positive.expected);
  },
  value: (v) => Number(v),
};

/** On or off: a flag's presence, a job file's true or false. */
export const onOff: Kind<boolean> = {
  expected: 'true or false',
  said: 'is-not',
  fromFlag: (t) => t !== 'false',
  check(value) {
    if (typeof value !== 'boolean') throw new Unreadable(onOff.expected);
  },
  value: (v) => v === true,
};

/** One of a fixed list. */
export function choice<T extends string>(values: readonly T[], arg = '<value>'): Kind<T> & { values: readonly T[] } {
  const expected = `one of ${values.join(', ')}`;
  const kind = {
    expected,
    arg,
    values,
    said: 'is-not' as const,
    fromFlag(t: string) {
      kind.check(t);
      return t;
    },
    check(value: unknown) {
      if (typeof value !== 'string' || !(values as readonly string[]).includes(value)) throw new Unreadable(expected);
    },
    value: (v: FormValue) => v as T,
  };
  return kind;
}

/** Text that is not empty: a name, a folder, a code page (checked where it is used). */
export function words(arg = '<text>', expected = 'text that is not empty'): Kind<string> {
  const kind: Kind<string> = {
    expected,
    arg,
    said: 'is-not',
    fromFlag(t) {
      kind.check(t);
      return t;
    },
    check(value) {
      if (typeof value !== 'string' || value.trim() === '') throw new Unreadable(expected);
    },
    value: (v) => String(v),
  };
  return kind;
}

/** A file or folder: relative to the working folder on the command line, to the job file in one. */
export const path: Kind<string> & { isPath: true } = { ...words('<path>', 'a path that is not empty'), isPath: true };

/** A web address, http or https (a Pushgateway, a ping URL). */
export const url: Kind<string> = {
  expected: 'an http or https URL',
  arg: '<url>',
  said: 'is-not',
  fromFlag(t) {
    url.check(t);
    return t;
  },
  check(value) {
    if (typeof value !== 'string' || !/^https?:\/\/[^\s/]/i.test(value) || !URL.canParse(value)) throw new Unreadable(url.expected);
  },
  value: (v) => String(v),
};

/** An id of the service: a uuid. */
export const uuid: Kind<string> = {
  expected: 'a uuid',
  arg: '<id>',
  said: 'is-not',
  fromFlag(t) {
    uuid.check(t);
    return t;
  },
  check(value) {
    if (typeof value !== 'string' || !isUuid(value)) throw new Unreadable(uuid.expected);
  },
  value: (v) => String(v),
};

/** A project on the command line: its id, or its name (resolved once there is a client). A job file names it by id. */
export const project: Kind<string> = { ...words('<id>', "a project's id or its name"), arg: '<id>' };

/** Repeatable text (`--include A --include B`; a job file's list). */
export const list: Kind<string[]> = {
  expected: 'a list of text',
  arg: '<glob>',
  said: 'is-not',
  fromFlag: (t) => [t],
  check(value) {
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v === '')) throw new Unreadable(list.expected);
  },
  value: (v) => v as string[],
};

/**
 * Ids or names (docs/cli.md, *Names and ids*), comma-separated on the command line; a list (or
 * `all`) in a job file. A name is looked up where the client is (a name holding a comma: its id).
 */
export const ids: Kind<'all' | string[]> = {
  expected: 'ids or names (comma-separated), or all',
  arg: '<ids>',
  said: 'is-not',
  fromFlag(t) {
    const out = t.split(',').map((s) => s.trim()).filter(Boolean);
    if (out.length === 0) throw new Unreadable(`${ids.expected}: none given`);
    return out;
  },
  check(value) {
    if (value === 'all') return;
    if (!Array.isArray(value) || value.length === 0 || value.some((v) => typeof v !== 'string' || v.trim() === '')) throw new Unreadable('a list of ids or names, or all');
  },
  value: (v) => (v === 'all' ? 'all' : (v as string[])),
};

/** `key=value`, repeatable on the command line; a mapping in a job file. */
export const pairs: Kind<Record<string, string>> = {
  expected: 'key=value',
  arg: '<key=value>',
  said: 'must-be',
  fromFlag(t) {
    const i = t.indexOf('=');
    if (i <= 0) throw new Unreadable('like key=value');
    return { [t.slice(0, i)]: t.slice(i + 1) };
  },
  check(value) {
    if (!value || typeof value !== 'object' || Array.isArray(value) || Object.values(value).some((v) => typeof v !== 'string')) throw new Unreadable('a mapping of keys to text');
  },
  value: (v) => v as Record<string, string>,
};

/** A mapping of names to one of some words (a retry policy's reasons, `badFile: never`): a job file's only. */
export function mappingTo<T extends string>(values: readonly T[], arg: string, expected: string): Kind<Record<string, T>> {
  const kind: Kind<Record<string, T>> = {
    expected,
    arg,
    said: 'is-not',
    fromFlag() {
      throw new Unreadable(expected);
    },
    check(value) {
      if (!value || typeof value !== 'object' || Array.isArray(value) || Object.values(value).some((v) => !(values as readonly unknown[]).includes(v))) throw new Unreadable(expected);
    },
    value: (v) => v as Record<string, T>,
  };
  return kind;
}

/** K/N: this process's share of a selection (as written: src/tenants/shard.ts reads its parts). */
export const shard: Kind<string> = {
  expected: 'K/N with 1 <= K <= N, like 2/3',
  arg: '<K/N>',
  said: 'must-be',
  fromFlag(t) {
    shard.check(t.trim());
    return t.trim();
  },
  check(value) {
    const m = typeof value === 'string' ? /^(\d+)\/(\d+)$/.exec(value) : null;
    if (!m || Number(m[1]) < 1 || Number(m[1]) > Number(m[2])) throw new Unreadable(shard.expected);
  },
  value: (v) => String(v),
};

/** A CSV separator: , ; | or tab (a typed `\t` and a real tab are tab); its value is the character. */
export const delimiter: Kind<string> = {
  expected: 'one ferry reads: give , or ; or | or tab',
  arg: '<char>',
  said: 'is-not',
  fromFlag(t) {
    const form = t === '\\t' || t === '\t' ? 'tab' : t;
    delimiter.check(form);
    return form;
  },
  check(value) {
    if (typeof value !== 'string' || ![',', ';', '|', 'tab'].includes(value)) throw new Unreadable(delimiter.expected);
  },
  value: (v) => (v === 'tab' ? '\t' : String(v)),
};
