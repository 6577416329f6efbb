// The pacer's rules on a clock the test moves (no timing in the assertions): a simulated service
// with a token bucket and random refusals (./pacing-sim.ts), and one client sending as fast as the
// pacer lets it. Several seeds each, so no rule passes by luck.
import { describe, expect, it } from 'vitest';
import { Pacer } from '../../src/api/pacing.js';
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

  it('a window refused above the floor sets the pace just under what the service accepted in it', () => {
    let now = 0;
    const pacer = new Pacer({ now: () => now });
    // 32 answers 5 ms apart, 4 of them refused.
    for (let i = 0; i < WINDOW; i++) {
      now += 5;
      if (i % 8 === 0) pacer.refused();
      else pacer.ok();
    }
    // The window runs from its first answer (5 ms) to its last (160 ms): 28 accepted in 155 ms.
    const accepted = 28 / 0.155;
    expect(pacer.currentRate).toBeCloseTo(0.9 * accepted, 5);
    const first = pacer.delay();
    expect(pacer.delay() - first).toBeCloseTo(1000 / (0.9 * accepted), 5);
  });

  // What goodput keeps of what the noise leaves: most under the mixes of issue 21 (5 to 12 %);
  // under 30 % a few trials at lower rates cost more.
  describe.each([
    [0.05, 0.85],
    [0.12, 0.85],
    [0.3, 0.6],
  ])('random refusals at a constant share of %s', (noise, kept) => {
    it.each(SEEDS)('do not drive the rate down (seed %i)', (seed) => {
      const offered = 200;
      const o = simulate({ seconds: 60, offered, noise, seed });
      // Never two cuts inside one window of answers.
      for (let i = 1; i < o.decreases.length; i++) expect((o.decreases[i] as number) - (o.decreases[i - 1] as number)).toBeGreaterThanOrEqual(WINDOW);
      // The rate is not driven down: goodput stays near what the noise leaves.
      expect(goodput(o, 5)).toBeGreaterThanOrEqual(kept * offered * (1 - noise));
      // A chance run of refusals may be taken for a limit now and then: a few cuts a minute, no more.
      expect(o.pacer.cuts).toBeLessThanOrEqual(6);
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
