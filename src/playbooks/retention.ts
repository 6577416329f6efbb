// Which backups to keep: the rules of `ferry playbooks backup`, as a pure function so they can be
// tested on their own. An archive is kept when any rule keeps it; with no rule, all are kept.
export interface RetentionRules {
  /** The newest N. */
  keep?: number | undefined;
  /** The newest of each of the last N days that have a backup (UTC days). */
  keepDaily?: number | undefined;
  /** The newest of each of the last N ISO weeks that have a backup. */
  keepWeekly?: number | undefined;
}

export interface Dated {
  exportedAt: string;
}

/** The archives to keep, of one playbook's backups (any order in, newest first out). */
export function toKeep<T extends Dated>(backups: readonly T[], rules: RetentionRules): Set<T> {
  const sorted = [...backups].sort((a, b) => Date.parse(b.exportedAt) - Date.parse(a.exportedAt));
  if (rules.keep === undefined && rules.keepDaily === undefined && rules.keepWeekly === undefined) return new Set(sorted);
  const kept = new Set<T>();
  // The newest is never pruned: it is what the next backup compares against.
  if (sorted[0]) kept.add(sorted[0]);
  sorted.slice(0, rules.keep ?? 0).forEach((b) => kept.add(b));
  newestPer(sorted, (d) => d.toISOString().slice(0, 10), rules.keepDaily ?? 0).forEach((b) => kept.add(b));
  newestPer(sorted, isoWeek, rules.keepWeekly ?? 0).forEach((b) => kept.add(b));
  return kept;
}

function newestPer<T extends Dated>(newestFirst: T[], bucket: (d: Date) => string, count: number): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const b of newestFirst) {
    if (seen.size >= count) break;
    const key = bucket(new Date(b.exportedAt));
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(b);
  }
  return out;
}

/** `2026-W47`: the ISO 8601 week of a UTC date. */
export function isoWeek(date: Date): string {
  const d = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
  const day = d.getUTCDay() || 7;
  d.setUTCDate(d.getUTCDate() + 4 - day);
  const yearStart = Date.UTC(d.getUTCFullYear(), 0, 1);
  const week = Math.ceil(((d.getTime() - yearStart) / 86_400_000 + 1) / 7);
  return `${d.getUTCFullYear()}-W${String(week).padStart(2, '0')}`;
}
