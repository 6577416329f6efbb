// `ferry doctor --probe` beyond the modes: what it cannot ask, a step answered 500, a listing lag,
// an expiring link, a read-only client, Ctrl-C once and twice and a kill -9 (the scratch project
// gone after, or removed by the next probe), --write-profile and what a later run says, --rps.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startEmulator, type EmulatorHandle } from '../../src/emulator/index.js';
import { FerryClient } from '../../src/api/index.js';
import { FERRY_BIN, onlyJson, runFerry } from '../helpers/cli.js';
import { writeTree } from '../helpers/service.js';
import { startRegion } from '../helpers/regions.js';
import { probe, probeEmulators, scratchLeft, type ProbeAnswer } from '../helpers/probe.js';

const emulator = probeEmulators();

describe('ferry doctor --probe', () => {
  it('without --playbook or --assistant, says what it did not ask and how to ask it', async () => {
    const { env, client } = await emulator({});
    try {
      const report = await probe(env);
      expect(report.probe.dateCompleted).toEqual({ unknown: expect.stringContaining('--playbook ID') });
      expect(report.probe.streamFormat).toEqual({ unknown: expect.stringContaining('--assistant PROJECT/ASSISTANT --model ID') });
      // As a person reads it: a line a finding, the flags, what was made, and how to record it.
      const text = await runFerry(['doctor', '--probe', '--probe-link-wait', '1s'], env);
      expect(text.code).toBe(0);
      const lines = text.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^what 127\.0\.0\.1:\d+, client contoso-sync answers:$/);
      expect(lines.slice(1).map((l) => l.trim().split(':')[0])).toEqual(['folderRoute', 'folderCase', 'contentRoute', 'contentRange', 'pageCap', 'listingLagMs', 'dateAddedResolutionMs', 'search', 'metadataRoundTrip', 'formOrder', 'dateCompleted', 'streamFormat', 'matches', 'scratch', 'to record listingLag, pageSize and formOrder in the profile']);
      expect(lines).toContain('  matches: ferry emulator (the defaults)');
      expect(lines).toContain('  scratch: 2 made, 2 removed');
    } finally {
      await client.close();
    }
  });

  it('a probe step the service answers 500: that finding is unknown with the reason, the rest answered', async () => {
    const { emu, env, client } = await emulator({});
    try {
      emu.setFaults({ rules: [{ kind: '500', method: 'POST', path: /^\/projects\/[^/]+\/folders$/ }] });
      const report = await probe(env);
      expect(report.probe.folderRoute).toEqual({ unknown: expect.stringMatching(/500/) });
      expect(report.probe.search).toMatchObject({ match: 'substring' });
      expect(report.probe.metadataRoundTrip).toMatchObject({ kept: 'kept' });
    } finally {
      emu.setFaults('');
      await client.close();
    }
  });

  it('a listing lag of 2 s: found, and given back as the flag', async () => {
    const { env, client } = await emulator({ listingLagMs: 2000 });
    try {
      const report = await probe(env);
      const lag = report.probe.listingLagMs as { worstMs: number; suggested: string };
      expect(lag.worstMs).toBeGreaterThan(0);
      expect(lag.worstMs).toBeLessThanOrEqual(3000);
      expect(report.matches).toMatch(/^--listing-lag \d+ms$/);
      // What the probe gave starts an emulator as it is, word for word, lagging as much.
      const region = await startRegion(report.matches.split(' '));
      try {
        expect(region.baseUrl).toMatch(/^http:/);
      } finally {
        await region.stop();
      }
    } finally {
      await client.close();
    }
  });

  it('a link that expires: found, with the TTL given back within the second the service counts in', async () => {
    const { env, client } = await emulator({ strict: true, linkTtlSeconds: 2 });
    try {
      const report = await probe(env, ['--probe-link-wait', '4s']);
      // Tried at doubling intervals: the last time it worked is before its 2 s ran out.
      const content = report.probe.contentRoute as { linkWorksAfterMs: number };
      expect(content.linkWorksAfterMs).toBeGreaterThan(0);
      expect(content.linkWorksAfterMs).toBeLessThan(2000);
      expect(report.matches).toMatch(/^--strict --link-ttl [12]$/);
    } finally {
      await client.close();
    }
  });

  it('a read-only client: says what it could not ask, makes nothing, exit 0', async () => {
    const { emu, client } = await emulator({});
    const t = emu.tenants[0]!;
    try {
      const env = { FERRY_BASE_URL: emu.baseUrl, FERRY_SETTINGS_URL: emu.settingsUrl, FERRY_AUTH_URL: emu.authUrl, FERRY_AUDIENCE: emu.audience, FERRY_CLIENT_ID: t.readOnlyClientId, FERRY_CLIENT_SECRET: t.readOnlyClientSecret };
      const report = await probe(env);
      expect(report.probe.folderRoute).toEqual({ unknown: expect.stringMatching(/may write/) });
      expect(report.probe.pageCap).toMatchObject({ cap: null });
      expect(report.scratch).toEqual({ created: 0, removed: 0, leftoversRemoved: 0 });
      expect(await scratchLeft(client)).toBe(0);
    } finally {
      await client.close();
    }
  });

  it('Ctrl-C: exit 3 with the scratch project removed; after a kill -9, the next probe removes what it left', async () => {
    const { env, client, emu } = await emulator({ listingLagMs: 3000 });
    try {
      const run = (signal: NodeJS.Signals) => {
        const child = spawn(process.execPath, [FERRY_BIN, 'doctor', '--probe', '--json', '--probe-link-wait', '1s'], { env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', FERRY_LOG_LEVEL: 'silent', ...env } });
        let stderr = '';
        let sent = false;
        child.stderr.on('data', (d) => {
          stderr += d;
          // Once: a second Ctrl-C exits at once (the next test).
          if (!sent && /scratch project \S+ made/.test(stderr)) sent = child.kill(signal);
        });
        return once(child, 'exit').then(([code]) => ({ code: code as number | null, stderr }));
      };
      const interrupted = await run('SIGINT');
      expect(interrupted.code).toBe(3);
      // Past the lag: what is listed now is what the service holds.
      emu.advanceClock(10_000);
      expect(await scratchLeft(client)).toBe(0);
      const killed = await run('SIGKILL');
      expect(killed.code).toBe(null);
      emu.advanceClock(10_000);
      // The scratch project, and the lag probe's canary when it was made before the kill.
      const left = await scratchLeft(client);
      expect(left).toBeGreaterThanOrEqual(1);
      const next = await probe(env);
      expect(next.scratch.leftoversRemoved).toBe(left);
      emu.advanceClock(10_000);
      expect(await scratchLeft(client)).toBe(0);
    } finally {
      await client.close();
    }
  });

  it('interrupted twice: the second Ctrl-C exits at once (exit 3), and the next probe removes what was left', async () => {
    const { env, client, emu } = await emulator({});
    try {
      // Removals answer 503 for now: the first Ctrl-C's clean-up is still under way when the second comes.
      emu.setFaults({ rules: [{ kind: '503', method: 'DELETE', path: /^\/projects\/[^/]+$/ }] });
      const child = spawn(process.execPath, [FERRY_BIN, 'doctor', '--probe', '--json', '--probe-link-wait', '1s'], { env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', FERRY_LOG_LEVEL: 'silent', ...env } });
      let stderr = '';
      let stdout = '';
      let sent = 0;
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => {
        stderr += d;
        if (sent === 0 && /scratch project \S+ made/.test(stderr)) child.kill('SIGINT'), sent++;
        if (sent === 1 && /SIGINT received: the probe stops/.test(stderr)) child.kill('SIGINT'), sent++;
      });
      const [code] = await once(child, 'exit');
      expect(code).toBe(3);
      expect(stderr).toMatch(/SIGINT again: exiting now; what the probe made and had not removed yet is left, and the next probe from this host removes it/);
      expect(stdout).toBe('');
      emu.setFaults('');
      const left = await scratchLeft(client);
      expect(left).toBeGreaterThanOrEqual(1);
      const next = await probe(env);
      expect(next.scratch.leftoversRemoved).toBe(left);
      expect(await scratchLeft(client)).toBe(0);
    } finally {
      emu.setFaults('');
      await client.close();
    }
  });

  it('--write-profile records listingLag, pageSize and formOrder with when; a service that then caps lower is warned of by the next run', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-probe-profile-'));
    const dataDir = join(dir, 'service');
    const first = await startEmulator({ dataDir, maxPageSize: 20 });
    const port = Number(new URL(first.baseUrl).port);
    const t = first.tenants[0]!;
    const config = join(dir, 'config.yaml');
    await writeFile(
      config,
      [
        '# the team\'s profiles',
        'defaultProfile: live',
        'profiles:',
        '  live:',
        `    baseUrl: ${first.baseUrl}`,
        `    settingsUrl: ${first.settingsUrl}`,
        `    authUrl: ${first.authUrl}`,
        `    audience: ${first.audience}`,
        `    clientId: ${t.clientId}`,
        '    clientSecretEnv: LIVE_SECRET',
        '    # asked of us by the service owners',
        '    requestsPerSecond: 200',
        '',
      ].join('\n'),
    );
    const env = { LIVE_SECRET: t.clientSecret, FERRY_CONFIG: config, FERRY_STATE_DIR: join(dir, 'state') };
    let second: EmulatorHandle | undefined;
    try {
      // More projects than a page holds, so that the cap shows.
      const seed = new FerryClient({ address: { baseUrl: first.baseUrl, settingsUrl: first.settingsUrl, authUrl: first.authUrl }, credentials: { clientId: t.clientId, clientSecret: t.clientSecret, audience: first.audience } });
      for (let i = 0; i < 25; i++) await seed.projects.create({ name: `team project ${i}`, description: '' });
      const project = (await seed.projects.create({ name: 'archive', description: '' })).objectIdentifier;
      await seed.close();

      for (let round = 0; round < 2; round++) {
        const r = await runFerry(['doctor', '--probe', '--json', '--probe-link-wait', '1s', '--write-profile'], env);
        expect(r.code, r.stderr).toBe(0);
        const out = onlyJson(r) as unknown as ProbeAnswer & { profileWritten: { file: string; profile: string; set: Record<string, unknown>; removed: string[] } };
        expect(out.probe.pageCap).toMatchObject({ cap: 20 });
        expect(out.profileWritten).toMatchObject({ file: config, profile: 'live', set: { listingLag: 0, pageSize: 20, formOrder: 'any' }, removed: [] });
        expect(r.stderr).toMatch(/recorded in profile "live" of .*config\.yaml: listingLag 0, pageSize 20, formOrder any \(worst listing lag [^,]+, pages capped at 20, form fields read after the file too\)/);
      }
      const text = await readFile(config, 'utf8');
      // The rest of the file as it was, and one comment of when (the second probe's replaced the first's).
      expect(text).toMatch(/^# the team's profiles\n/);
      expect(text).toContain('    # asked of us by the service owners\n    requestsPerSecond: 200\n');
      expect(text.match(/# measured by ferry doctor --probe on \d{4}-\d\d-\d\dT\d\d:\d\dZ: worst listing lag [^,]+, pages capped at 20, form fields read after the file too\n/g)).toHaveLength(1);
      expect(text).toMatch(/\n {4}listingLag: 0\n {4}pageSize: 20\n {4}formOrder: any\n/);

      const src = join(dir, 'archive');
      await writeTree(src, Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`file-${i}.txt`, `document ${i}`])));
      const seeded = await runFerry(['mirror', src, '--project', project, '--json'], env);
      expect(seeded.code, seeded.stderr).toBe(0);

      // The service changes: its pages now hold 7. A run from a fresh store reads the project whole.
      await first.close();
      second = await startEmulator({ dataDir, port, maxPageSize: 7 });
      const later = await runFerry(['mirror', src, '--project', project, '--json', '--state', join(dir, 'fresh.sqlite')], env);
      expect(later.code, later.stderr).toBe(0);
      const summary = onlyJson(later) as { counts: Record<string, number>; problems: { key: string; reason: string }[] };
      expect(summary.counts).toMatchObject({ discovered: 30, uploaded: 0, failed: 0 });
      expect(summary.problems.filter((p) => p.key === '(service)')).toEqual([
        { key: '(service)', reason: expect.stringMatching(/the service at \S+ caps its pages lower than the profile records \(pageSize 20\): it gave 7 items where a page of 20 was asked \(GET \/projects\/[0-9a-f-]+\/documents; 1 list met it\)\. Every item was still read \(by totalCount\)\. Measure it again: ferry doctor --probe --write-profile/) },
      ]);
      // Named by host: a migration lists two services.
      expect(summary.problems.find((p) => p.key === '(service)')?.reason).toContain(`the service at 127.0.0.1:${port} caps`);
    } finally {
      await first.close().catch(() => undefined);
      await second?.close();
    }
  });

  it('--write-profile with no config file in use: exit 2 naming what to give, nothing made', async () => {
    const { env, client } = await emulator({});
    try {
      const r = await runFerry(['doctor', '--probe', '--write-profile'], env);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--write-profile records into a profile of a config file, and none is in use: name one with --config FILE \(or FERRY_CONFIG\) and -p NAME/);
      expect(await scratchLeft(client)).toBe(0);
      const alone = await runFerry(['doctor', '--write-profile'], env);
      expect(alone.code).toBe(2);
      expect(alone.stderr).toMatch(/--write-profile go with --probe/);
    } finally {
      await client.close();
    }
  });

  it('sends a few dozen requests, and keeps to --rps (a service that refuses more than 20 a second, 5 at once, refuses none of them at --rps 8)', async () => {
    // A margin of 2.5 times and a burst of 5: a stalled event loop on either side bunches requests up, it does not make ferry's rate wrong.
    const { emu, env, client } = await emulator({ rateLimit: { rps: 20, burst: 5 } });
    try {
      await probe(env, ['--rps', '8']);
      const paced = emu.traffic();
      expect(paced.throttled).toBe(0);
      expect(paced.requests).toBeGreaterThanOrEqual(20);
      expect(paced.requests).toBeLessThanOrEqual(40);
      // The count above can fail: unpaced, three requests back to back go over a limit of one a second.
      const strict = await emulator({ rateLimit: { rps: 1, burst: 1 } });
      try {
        expect((await runFerry(['doctor', '--json'], strict.env)).code).toBe(0);
        expect(strict.emu.traffic().throttled).toBeGreaterThan(0);
      } finally {
        await strict.client.close();
      }
      const zero = await runFerry(['doctor', '--probe', '--rps', '0'], env);
      expect(zero.code).toBe(2);
      expect(zero.stderr).toContain('--rps must be a positive number, not "0"');
      expect(await scratchLeft(client)).toBe(0);
    } finally {
      await client.close();
    }
  });

  it('a bad --probe-link-wait is exit 2, nothing made', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-probe-'));
    const r = await runFerry(['doctor', '--probe', '--probe-link-wait', 'soon'], { FERRY_STATE_DIR: dir, FERRY_BASE_URL: 'http://127.0.0.1:9', FERRY_SETTINGS_URL: 'http://127.0.0.1:9', FERRY_AUTH_URL: 'http://127.0.0.1:9', FERRY_AUDIENCE: 'a', FERRY_CLIENT_ID: 'a', FERRY_CLIENT_SECRET: 'b' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--probe-link-wait');
  });
});
