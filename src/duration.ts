// Durations as every setting writes them: `90s`, `30m`, `2h`, `1h30m`, `250ms`, `1d`, `2w`, or plain
// seconds. One owner: flags, job files, profiles and the environment read them here, so that a
// unit one setting takes every other takes too (each setting keeps its own range).
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const DURATION = /^(\d+(ms|s|m|h|d|w))+$|^\d+$/;

/** What a duration looks like, for a message: `like 90s, 30m, 2h or 1d`. */
export const DURATION_EXAMPLES = '90s, 30m, 2h or 1d';

/** Whether `text` is a duration (no sign, no spaces). */
export function isDuration(text: string): boolean {
  return DURATION.test(text);
}

/** A duration in ms; plain digits are seconds. Check it with isDuration first: anything else is 0. */
export function parseDuration(text: string): number {
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  return [...text.matchAll(/(\d+)(ms|s|m|h|d|w)/g)].reduce((ms, p) => ms + Number(p[1]) * UNIT_MS[p[2] as keyof typeof UNIT_MS], 0);
}

/** A duration as settings write it, in its largest whole unit: 30000 -> `30s`, 3600000 -> `1h`. */
export function durationText(ms: number): string {
  for (const unit of ['w', 'd', 'h', 'm', 's'] as const) if (ms >= UNIT_MS[unit] && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  return `${ms}ms`;
}
