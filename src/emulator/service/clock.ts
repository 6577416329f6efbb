// The emulator's notion of "now". Tests move it forward to expire tokens and
// signed URLs without waiting.
export interface Clock {
  nowMs(): number;
  nowIso(): string;
  advance(ms: number): void;
}

/** `resolutionMs`: the times it gives (nowIso) are cut to this granularity, as some services store them. */
export function createClock(resolutionMs = 1): Clock {
  let offsetMs = 0;
  return {
    nowMs: () => Date.now() + offsetMs,
    nowIso: () => new Date(Math.floor((Date.now() + offsetMs) / resolutionMs) * resolutionMs).toISOString(),
    advance: (ms) => {
      offsetMs += ms;
    },
  };
}
