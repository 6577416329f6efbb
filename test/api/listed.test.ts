// "Not listed, so not there", decided in one place (src/api/listed.ts), on a scripted clock; and
// held to: no other module reads the bound to wait, poll or decide (a reading is named below with why).
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expectListed, listsAtOnce, lookUntilListed, monotonicClock, owedListing, awaitListed, listedAfter, type ListingBound, type Clock } from '../../src/api/listed.js';
import { ListingLagError, ListingLagWatch } from '../../src/api/listing-lag.js';

class ScriptedClock implements Clock {
  t = 1_000;
  readonly sleeps: number[] = [];
  now(): number {
    return this.t;
  }
  async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.t += ms;
  }
}

describe('a listing that has seen everything written before T', () => {
  it('waits out what is left of the bound after T, and nothing once it has passed', async () => {
    const clock = new ScriptedClock();
    const bound = new ListingLagWatch(2_000);
    expect(await listedAfter(bound, 500, clock)).toBe(2_500);
    expect(clock.now()).toBe(2_500);
    expect(await listedAfter(bound, 100, clock)).toBe(2_100);
    expect(clock.sleeps).toEqual([1_500]);
    expect(await listedAfter(new ListingLagWatch(0), clock.now(), clock)).toBe(clock.now());
  });

  it('looks again until a look begun the bound after T has not found it; found sooner, it is there', async () => {
    const clock = new ScriptedClock();
    const bound: ListingBound = new ListingLagWatch(1_000);
    let looks = 0;
    expect(await lookUntilListed(bound, clock.now(), async () => (++looks === 3 ? 'x' : undefined), { clock })).toBe('x');
    const never = { looks: 0, at: [] as number[] };
    const since = clock.now();
    expect(await lookUntilListed(bound, since, async () => void never.at.push(clock.now() - since), { clock })).toBeUndefined();
    // The last look began no sooner than the bound after T.
    expect(never.at.at(-1)).toBeGreaterThanOrEqual(1_000);
    expect(never.at.slice(0, -1).every((t) => t < 1_000)).toBe(true);
  });

  it('an item known to exist and still not listed the bound after is a lag beyond the bound, told through the watch', async () => {
    const clock = new ScriptedClock();
    const watch = new ListingLagWatch(750);
    await expect(expectListed(watch, clock.now(), async () => undefined, 'a folder', { clock })).rejects.toBeInstanceOf(ListingLagError);
    expect(watch.exceeded).toBeInstanceOf(ListingLagError);
    expect(watch.report().observedMaxMs).toBeGreaterThanOrEqual(750);
    const fine = new ListingLagWatch(750);
    expect(await expectListed(fine, clock.now(), async () => 7, 'a folder', { clock })).toBe(7);
    expect(fine.exceeded).toBeUndefined();
    expect(owedListing(fine, 749)).toBe(false);
    expect(owedListing(fine, 750)).toBe(true);
  });
});

describe('the edges of the rule', () => {
  it('a bound of 0 lists at once; exactly settled is no wait at all', async () => {
    expect(listsAtOnce(new ListingLagWatch(0))).toBe(true);
    expect(listsAtOnce(new ListingLagWatch(1))).toBe(false);
    const clock = new ScriptedClock();
    await listedAfter(new ListingLagWatch(500), clock.now() - 500, clock);
    expect(clock.sleeps).toEqual([]);
  });

  it('found on a later look within the bound: there, no lag told; looks are spaced by `everyMs`, the last cut to the bound', async () => {
    const clock = new ScriptedClock();
    const watch = new ListingLagWatch(1_000);
    let looks = 0;
    expect(await expectListed(watch, clock.now(), async () => (++looks === 3 ? 'folder' : undefined), 'a folder', { clock, everyMs: 400 })).toBe('folder');
    expect(clock.sleeps).toEqual([400, 400]);
    expect(watch.exceeded).toBeUndefined();
    const late = new ScriptedClock();
    await expect(expectListed(new ListingLagWatch(1_000), late.now(), async () => undefined, 'a folder', { clock: late, everyMs: 400 })).rejects.toThrow(ListingLagError);
    expect(late.sleeps).toEqual([400, 400, 200]);
  });

  it('a bound that tells no error still stops the decision, saying what was missing', async () => {
    const clock = new ScriptedClock();
    const quiet: ListingBound = { boundMs: 100, missing: () => undefined };
    await expect(expectListed(quiet, clock.now(), async () => undefined, 'a folder', { clock })).rejects.toThrow('a folder was not listed 100 ms after it was made');
  });

  it('the monotonic clock counts forward and sleeps as long as asked', async () => {
    const a = monotonicClock.now();
    await monotonicClock.sleep(20);
    expect(monotonicClock.now() - a).toBeGreaterThanOrEqual(15);
    // Without a clock given, the monotonic one is used.
    const since = performance.now();
    expect(await lookUntilListed(new ListingLagWatch(0), since, async () => undefined)).toBeUndefined();
    expect(await expectListed(new ListingLagWatch(0), since, async () => 1, 'x')).toBe(1);
  });
});

describe('the proof a decision asks for', () => {
  it('is given only once the wait is over; a run stopped during the wait gets none', async () => {
    const clock = new ScriptedClock();
    const proof = await awaitListed(new ListingLagWatch(1_500), clock.now(), clock);
    expect(clock.sleeps).toEqual([1_500]);
    expect(proof.since).toBe(1_000);
    const stopped = new AbortController();
    stopped.abort(new Error('SIGTERM'));
    await expect(awaitListed(new ListingLagWatch(1_500), clock.now(), clock, stopped.signal)).rejects.toThrow('SIGTERM');
  });
});

describe('one owner of the rule', () => {
  /**
   * Readings of the bound outside src/api/listed.ts that neither wait nor decide from a listing:
   * each says what it does with it.
   */
  const ALLOWED: Record<string, string> = {
    'src/api/listing-lag.ts': 'the watch itself: holds and reports the bound',
    'src/runner/metrics.ts': 'reports the bound honoured',
    'src/runner/lease/protocol.ts': 'a service that lists at once: a bound of 0',
    'src/runner/lease/held.ts': "says the release's wait ('settling') in its event",
    'src/runner/lease/acquire.ts': 'says how late a claim was seen missing, in its error',
    'src/backends/project/lease-use.ts': "gives the bound to the lease's TTL policy (src/runner/lease/ttl.ts): a TTL long enough to renew within under it",
  };
  it('no other module reads boundMs', () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (name.endsWith('.ts')) files.push(path);
      }
    };
    walk(join(root, 'src'));
    walk(join(root, 'jobs'));
    const readers = files.map((f) => relative(root, f)).filter((f) => f !== 'src/api/listed.ts' && /\bboundMs\b/.test(readFileSync(join(root, f), 'utf8')));
    expect(readers.filter((f) => !(f in ALLOWED)), 'read the bound through src/api/listed.ts').toEqual([]);
  });
});
