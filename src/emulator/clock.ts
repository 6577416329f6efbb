// The emulator's notion of "now". Tests move it forward to expire tokens and
// signed URLs without waiting.
export interface Clock {
  nowMs(): number;
  nowIso(): string;
  advance(ms: number): void;
}

export function createClock(): Clock {
  let offsetMs = 0;
  return {
    nowMs: () => Date.now() + offsetMs,
    nowIso: () => new Date(Date.now() + offsetMs).toISOString(),
    advance: (ms) => {
      offsetMs += ms;
    },
  };
}
