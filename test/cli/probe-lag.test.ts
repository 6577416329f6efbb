// `ferry doctor --probe-lag` against the emulator, listing at once and listing late: the worst
// lag measured, the bound to set said, the canary gone after; a read-only client told it needs a
// writer; Ctrl-C mid-probe leaves no canary behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { startService, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { CANARY_PREFIX } from '../../src/cli/actions/probe-lag.js';

const LAG_MS = 1_500;
let atOnce: Service;
let late: Service;
beforeAll(async () => {
  [atOnce, late] = await Promise.all([startService(), startService({ listingLagMs: LAG_MS })]);
});
afterAll(async () => {
  await Promise.all([atOnce.close(), late.close()]);
});

type Probe = { rounds: { listedMs: number; searchedMs: number; goneMs: number }[]; worstMs: number; suggested: string; canary: { created: number; removed: number } };

/** Canaries left on the service (read once any lag has passed). */
async function canaries(service: Service): Promise<number> {
  await sleep(LAG_MS + 50);
  return (await service.client().projects.list({ searchText: CANARY_PREFIX.trim() }).all()).length;
}

describe('ferry doctor --probe-lag', () => {
  it('a service that lists at once: every round 0 or near it, --listing-lag 0 said, the canaries removed', async () => {
    const r = await runFerry(['doctor', '--probe-lag', '--json'], atOnce.env());
    expect(r.code, r.stderr).toBe(0);
    const probe = (onlyJson(r) as { lagProbe: Probe }).lagProbe;
    expect(probe.rounds).toHaveLength(3);
    expect(probe.suggested).toBe('0');
    expect(probe.canary).toEqual({ created: 3, removed: 3 });
    expect(await canaries(atOnce)).toBe(0);
    const text = await runFerry(['doctor', '--probe-lag'], atOnce.env());
    expect(text.stdout).toMatch(/lists new items at once; --listing-lag 0 \(the default\) is right/);
  });

  it(`a service that lists up to ${LAG_MS} ms late: a lag measured, a bound above it said`, async () => {
    const r = await runFerry(['doctor', '--probe-lag', '--json'], late.env());
    expect(r.code, r.stderr).toBe(0);
    const probe = (onlyJson(r) as { lagProbe: Probe }).lagProbe;
    expect(probe.worstMs).toBeGreaterThan(0);
    expect(probe.worstMs).toBeLessThanOrEqual(LAG_MS + 1_000);
    // The bound said covers what was measured, with margin.
    expect(Number(probe.suggested.replace(/s$/, '')) * 1000).toBeGreaterThanOrEqual(probe.worstMs);
    expect(probe.canary).toEqual({ created: 3, removed: 3 });
    expect(await canaries(late)).toBe(0);
    const text = await runFerry(['doctor', '--probe-lag'], late.env());
    expect(text.stdout).toMatch(/set --listing-lag \d+s \(or listingLag: \d+s in the profile, FERRY_LISTING_LAG=\d+s\)/);
  });

  it('a read-only client is told the probe needs a writer (exit 2), and nothing is made', async () => {
    const t = atOnce.emulator.tenants[0]!;
    const r = await runFerry(['doctor', '--probe-lag'], { ...atOnce.env(), FERRY_CLIENT_ID: t.readOnlyClientId, FERRY_CLIENT_SECRET: t.readOnlyClientSecret });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/needs a client that can write.*read-only/);
    expect(await canaries(atOnce)).toBe(0);
  });

  it('interrupted (SIGINT) while waiting for a late listing: exit 3, the canary removed', async () => {
    late.emulator.setListingLag(60_000);
    try {
      const r = await runFerry(['doctor', '--probe-lag', '--json'], late.env(), (child) => {
        // Once the canary is made (it says so on stderr), while its listing is awaited.
        let sent = false;
        child.stderr!.on('data', (d: Buffer) => {
          // Once: a second Ctrl-C exits at once.
          if (!sent && String(d).includes('canary project')) sent = child.kill('SIGINT');
        });
      });
      expect(r.code, r.stdout + r.stderr).toBe(3);
      const answer = onlyJson(r) as { status: string; lagProbe: Probe };
      expect(answer.status).toBe('interrupted');
      expect(answer.lagProbe.canary.created).toBe(answer.lagProbe.canary.removed);
    } finally {
      late.emulator.setListingLag(LAG_MS);
    }
    // A removed project stays listed up to the lag in force at its removal (60 s here): past it,
    // a canary still listed is one that was never removed. Counted sooner, the answer raced the
    // canary's own draw of that lag, and a loaded machine lost the race (seen twice).
    late.emulator.advanceClock(60_001);
    expect(await canaries(late)).toBe(0);
  });
});
