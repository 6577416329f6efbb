// A deterministic service for the pacer's tests: a token bucket (the limit), random refusals at a
// constant share (the noise), and one client sending as fast as the pacer lets it, on a clock the
// simulation moves. No timers: every figure is a count.
import { Pacer } from '../../src/api/pacing.js';
import { seededRandom } from '../../src/emulator/service/random.js';

export interface Scenario {
  seconds: number;
  /** How fast the client would send unpaced, requests per second. */
  offered: number;
  /** The service's limit, requests per second (a token bucket holding one second's worth). */
  limit?: number | ((t: number) => number | undefined);
  /** Share of requests refused at random whatever the rate. */
  noise?: number;
  seed?: number;
}

export interface Outcome {
  pacer: Pacer;
  /** Accepted requests per second, second by second. */
  perSecond: number[];
  sent: number;
  refused: number;
  /** Refused by the limit (not by the noise). */
  overLimit: number;
  lowestRate: number | undefined;
  /** The answer counts at which the rate went down. */
  decreases: number[];
}

export function simulate(s: Scenario): Outcome {
  let now = 0;
  const pacer = new Pacer({ now: () => now });
  const random = seededRandom(s.seed ?? 1);
  const limitAt = typeof s.limit === 'function' ? s.limit : () => (s.limit as number | undefined);
  let tokens = 0;
  let filledAt = 0;
  const perSecond = new Array<number>(s.seconds).fill(0);
  let sent = 0;
  let refused = 0;
  let overLimit = 0;
  let lowestRate: number | undefined;
  const decreases: number[] = [];
  let answers = 0;
  let t = 0;
  while (t < s.seconds * 1000) {
    now = t;
    now = t + pacer.delay();
    if (now >= s.seconds * 1000) break;
    sent++;
    const before = pacer.currentRate;
    const limit = limitAt(now);
    if (limit !== undefined) tokens = Math.min(limit, tokens + ((now - filledAt) / 1000) * limit);
    filledAt = now;
    const noisy = random() < (s.noise ?? 0);
    const limited = !noisy && limit !== undefined && tokens < 1;
    if (noisy || limited) {
      refused++;
      if (limited) overLimit++;
      pacer.throttled();
    } else {
      if (limit !== undefined) tokens -= 1;
      perSecond[Math.floor(now / 1000)]! += 1;
      pacer.ok();
    }
    answers++;
    const rate = pacer.currentRate;
    if (rate !== undefined) {
      if (before === undefined || rate < before) decreases.push(answers);
      lowestRate = Math.min(lowestRate ?? rate, rate);
    }
    t = now + 1000 / s.offered;
  }
  return { pacer, perSecond, sent, refused, overLimit, lowestRate, decreases };
}

/** Mean of the accepted requests per second over seconds [from, to). */
export function goodput(o: Outcome, from: number, to = o.perSecond.length): number {
  const slice = o.perSecond.slice(from, to);
  return slice.reduce((a, b) => a + b, 0) / slice.length;
}
