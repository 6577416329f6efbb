// The pacer's arithmetic, on a clock the test moves (no timing in the assertions).
import { describe, expect, it } from 'vitest';
import { Pacer } from '../../src/api/pacing.js';

describe('pacing learned from 429s', () => {
  it('paces nothing until the first refusal', () => {
    let now = 0;
    const pacer = new Pacer({ now: () => now });
    for (let i = 0; i < 100; i++) {
      expect(pacer.delay()).toBe(0);
      pacer.ok();
      now += 1;
    }
    expect(pacer.currentRate).toBeUndefined();
  });

  it('after a refusal paces just under the rate the service accepted', () => {
    let now = 10_000;
    const pacer = new Pacer({ now: () => now });
    // 200 accepted in the last second, then a 429 asking for 1 s.
    for (let i = 0; i < 200; i++) {
      now += 5;
      pacer.ok();
    }
    pacer.refused();
    expect(pacer.currentRate).toBeCloseTo(190, 5);
    // The next requests are spaced 1000/190 ms apart.
    expect(pacer.delay()).toBeCloseTo(1000 / 190, 5);
    expect(pacer.delay()).toBeCloseTo(2000 / 190, 5);
  });

  it('rises 10 % per second without a refusal, and falls again at the next one', () => {
    let now = 0;
    const pacer = new Pacer({ now: () => now });
    for (let i = 0; i < 100; i++) {
      now += 10;
      pacer.ok();
    }
    pacer.refused();
    const start = pacer.currentRate as number;
    now += 3_000;
    pacer.delay();
    expect(pacer.currentRate).toBeCloseTo(start * 1.1 ** 3, 5);
    // A refusal with nothing accepted lately drops to the floor, never below it.
    now += 5_000;
    pacer.refused();
    expect(pacer.currentRate).toBe(1);
  });
});
