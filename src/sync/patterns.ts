// Which paths a run takes: --include, --exclude and --filter-from, one syntax for every source (a
// folder, a zip, a project), so that `mirror` and `pull` given the same patterns pick the same
// paths. Patterns are picomatch globs over the path relative to the source, `/`-separated, dot
// files included (`*` stays inside one folder, `**` crosses folders).
//
// - An include pattern must match the path itself; with include patterns, a path no pattern
//   includes is left out.
// - An exclude pattern leaves out the path, and everything under a folder it matches: `--exclude
//   drafts` leaves out the folder drafts and all it holds (as a folder walk that never goes in).
// - A filter file (rclone's shape) holds rules, one per line: `+ PATTERN` takes, `- PATTERN`
//   leaves out (a folder with all it holds, as --exclude), `#` or `;` starts a comment, blank lines
//   are passed over. The first rule that matches decides; a path no rule matches is taken.
//
// Written here rather than taken from fast-glob's own include/ignore handling because pull and
// zips are not walked by fast-glob: one matcher, used by all three, is what makes them agree. (A
// filter file is read by src/config/filter-file.ts and parsed by ./filter-rules.ts.)
import picomatch from 'picomatch';
import type { FilterRule } from './filter-rules.js';

export type { FilterRule } from './filter-rules.js';

export interface PathPatterns {
  include?: string[] | undefined;
  exclude?: string[] | undefined;
  /** Ordered rules from a filter file (parseFilterRules). */
  rules?: FilterRule[] | undefined;
}

// dotAll ('s'): picomatch builds `**` and `?` from a regular expression's `.`, which without it
// matches no U+2028, U+2029 or newline, so a path holding one would be left out in silence.
const OPTIONS = { dot: true, flags: 's' } as const;

/** Whether a path is wanted: true for every path when no pattern is given. */
export function pathFilter(p: PathPatterns): (key: string) => boolean {
  const include = p.include?.length ? picomatch(p.include, OPTIONS) : undefined;
  const exclude = p.exclude?.length ? picomatch(p.exclude, OPTIONS) : undefined;
  const rules = (p.rules ?? []).map((r) => ({ take: r.take, match: picomatch(r.pattern, OPTIONS) }));
  if (!include && !exclude && rules.length === 0) return () => true;
  return (key) => {
    for (const rule of rules) {
      if (rule.take ? rule.match(key) : underMatch(rule.match, key)) return rule.take;
    }
    if (exclude && underMatch(exclude, key)) return false;
    return include ? include(key) : true;
  };
}

/** The path or one of the folders it sits in matches. */
function underMatch(match: (s: string) => boolean, key: string): boolean {
  if (match(key)) return true;
  for (let at = key.indexOf('/'); at > 0; at = key.indexOf('/', at + 1)) if (match(key.slice(0, at))) return true;
  return false;
}
