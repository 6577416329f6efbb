// The pacer's rules on a clock the test moves (no timing in the assertions): a simulated service
// with a token bucket and random refusals (./pacing-sim.ts), and one client sending as fast as the
// pacer lets it. Several seeds each, so no rule passes by luck.
import { describe, expect, it } from 'vitest';
import { Pacer, criticalCount } from '../../src/api/pacing.js';
import { goodput, simulate } from './pacing-sim.js';

const SEEDS = [1, 2, 3, 4, 5];
const WINDOW = 32;

describe('pacing learned from refusals', () => {
  it('paces nothing until refusals lie above chance', () => {
    let now = 0;
    const pacer = new Pacer({ now: () => now });
    for (let i = 0; i < 1000; i++) {
      expect(pacer.delay()).toBe(0);
      pacer.ok();
      now += 1;
    }
    expect(pacer.currentRate).toBeUndefined();
  });

  it('two windows in a row refused above the floor set the pace just under what the service accepted', () => {
    let now = 0;
    const pacer = new Pacer({ now: () => now });
    // 32 answers 5 ms apart, 4 of them refused, twice.
    const window = () => {
      for (let i = 0; i < WINDOW; i++) {
        now += 5;
        if (i % 8 === 0) pacer.throttled();
        else pacer.ok();
      }
    };
    window();
    // One such window may be chance: nothing is paced yet.
    expect(pacer.currentRate).toBeUndefined();
    window();
    // The second window runs from the first's last answer (160 ms) to its own (320 ms): 28 accepted in 160 ms.
    const accepted = 28 / 0.16;
    expect(pacer.currentRate).toBeCloseTo(0.9 * accepted, 5);
    const first = pacer.delay();
    expect(pacer.delay() - first).toBeCloseTo(1000 / (0.9 * accepted), 5);
  });

  it('a window that began in the serial start is paced from its busy part', () => {
    let now = 0;
    const pacer = new Pacer({ now: () => now });
    // A window refused above chance, then one of 16 answers one at a time, 50 ms apart (a job's
    // start), and 16 at 1 ms, 4 of them refused.
    for (let i = 0; i < WINDOW; i++) {
      now += 1;
      if (i % 8 === 0) pacer.throttled();
      else pacer.ok();
    }
    for (let i = 0; i < WINDOW / 2; i++) {
      now += 50;
      pacer.ok();
    }
    for (let i = 0; i < WINDOW / 2; i++) {
      now += 1;
      if (i % 4 === 0) pacer.throttled();
      else pacer.ok();
    }
    // Over the whole window 28 were accepted in 766 ms (37/s); over its second half 12 in 16 ms,
    // counted as at least 25 ms: 480/s, which the pace is set just under.
    expect(pacer.currentRate).toBeCloseTo(0.9 * 480, 5);
  });

  it('counts 503s only when they persist', () => {
    const feed = (pacer: Pacer, clock: { now: number }, every: number, kind: '503' | '429') => {
      for (let i = 0; i < WINDOW * 20; i++) {
        clock.now += 2;
        if (i % every === 0) pacer.throttled(kind === '503');
        else pacer.ok();
      }
    };
    // One in 8 answered 503, window after window: noise a busy service answers, not a limit.
    const c1 = { now: 0 };
    const sporadic = new Pacer({ now: () => c1.now });
    feed(sporadic, c1, 8, '503');
    expect(sporadic.currentRate).toBeUndefined();
    expect(sporadic.cuts + sporadic.undone).toBe(0);
    // The same share of 429s is judged: a trial, then undone as noise.
    const c2 = { now: 0 };
    const asked = new Pacer({ now: () => c2.now });
    feed(asked, c2, 8, '429');
    expect(asked.undone).toBeGreaterThan(0);
    // Half the answers 503: an overloaded service, and the pace is cut.
    const c3 = { now: 0 };
    const overloaded = new Pacer({ now: () => c3.now });
    for (let i = 0; i < WINDOW * 2; i++) {
      c3.now += 2;
      if (i % 2 === 0) overloaded.throttled(true);
      else overloaded.ok();
    }
    expect(overloaded.currentRate).toBeDefined();
  });

  it('lets a refusal amid answers go again without its Retry-After until a limit is paced or four come in a row', () => {
    let now = 0;
    const pacer = new Pacer({ now: () => now });
    for (let i = 0; i < 10; i++) {
      now += 2;
      pacer.ok();
    }
    pacer.throttled();
    pacer.throttled(true);
    pacer.throttled();
    expect(pacer.unlimited).toBe(true);
    pacer.throttled();
    expect(pacer.unlimited).toBe(false);
    pacer.ok();
    expect(pacer.unlimited).toBe(true);
    // A real limit found and kept: Retry-After is waited in full.
    const o = simulate({ seconds: 10, offered: 300, limit: 100, seed: 1 });
    expect(o.pacer.cuts).toBeGreaterThan(0);
    expect(o.pacer.currentRate).toBeDefined();
    expect(o.pacer.unlimited).toBe(false);
  });

  it('starts a trial from the unpaced state only on refusals noise gives in at most 1 % of windows', () => {
    // Binomial(32, 0.05): P(X >= 6) is 0.6 %, P(X >= 5) 2.3 %.
    expect(criticalCount(32, 0.05)).toBe(6);
    expect(criticalCount(32, 0)).toBe(1);
    expect(criticalCount(4, 0.05)).toBe(3);
  });

  // What goodput keeps of what the noise leaves: all but 5 %, at 5, 12 and 30 % random refusals.
  describe.each([
    [0.05, 0.95],
    [0.12, 0.95],
    [0.3, 0.95],
  ])('random refusals at a constant share of %s', (noise, kept) => {
    it.each(SEEDS)('do not drive the rate down (seed %i)', (seed) => {
      const offered = 200;
      const o = simulate({ seconds: 60, offered, noise, seed });
      // Never two cuts inside one window of answers.
      for (let i = 1; i < o.decreases.length; i++) expect((o.decreases[i] as number) - (o.decreases[i - 1] as number)).toBeGreaterThanOrEqual(WINDOW);
      // The rate is not driven down: goodput stays near what the noise leaves.
      expect(goodput(o, 5)).toBeGreaterThanOrEqual(kept * offered * (1 - noise));
      // A window picked for being refused above chance overstates the noise; judged against it
      // alone a trial "fell" by chance and kept its cut. Two windows in a row: no cut is kept.
      expect(o.pacer.cuts).toBe(0);
      // The floor it learned is the noise.
      expect(o.pacer.noiseFloor).toBeGreaterThan(noise * 0.5);
      expect(o.pacer.noiseFloor).toBeLessThan(noise * 1.6);
    });
  });

  it.each(SEEDS)('finds a real limit and keeps under it: >= 0.9 R, <= 5 per cent refused by it (seed %i)', (seed) => {
    const o = simulate({ seconds: 60, offered: 300, limit: 100, seed });
    expect(goodput(o, 5)).toBeGreaterThanOrEqual(90);
    expect(o.overLimit / o.sent).toBeLessThanOrEqual(0.05);
    expect(o.pacer.cuts).toBeGreaterThan(0);
  });

  it.each(SEEDS)('finds a real limit through 5 per cent noise (seed %i)', (seed) => {
    const o = simulate({ seconds: 60, offered: 300, limit: 100, noise: 0.05, seed });
    expect(goodput(o, 5)).toBeGreaterThanOrEqual(90 * 0.95);
    // The noise widens what counts as chance, so the pace probes a little further over the limit.
    expect(o.overLimit / o.sent).toBeLessThanOrEqual(0.1);
  });

  it.each(SEEDS)('finds a limit that appears mid-run, and recovers when it is lifted (seed %i)', (seed) => {
    const appears = simulate({ seconds: 60, offered: 300, limit: (t) => (t < 20_000 ? undefined : 100), seed });
    expect(goodput(appears, 25)).toBeGreaterThanOrEqual(90);
    expect(appears.overLimit / appears.sent).toBeLessThanOrEqual(0.05);
    const lifted = simulate({ seconds: 60, offered: 300, limit: (t) => (t < 30_000 ? 100 : undefined), seed });
    expect(goodput(lifted, 45)).toBeGreaterThanOrEqual(0.9 * 300);
  });
});
