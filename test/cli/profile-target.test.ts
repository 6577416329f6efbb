// Each write goes to the tenant the command names: a profile named with -p or --to-profile is used
// alone. FERRY_* connection variables that say otherwise are refused (exit 2, nothing written), a
// secret from FERRY_CLIENT_SECRET does not replace the profile's own, and the summary names the
// target (host, client id, profile) in text and in JSON.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { minimalEntries, playbookArchive } from '../helpers/archives.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

async function playbookCount(tenant: number): Promise<number> {
  return (await service.client({}, tenant).playbooks.searchAll().all()).length;
}

describe('a named profile and FERRY_* variables', () => {
  it('refuses to mix them, writes to the named tenant, and names it in the summary', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-target-'));
    const us = service.emulator.tenants[1]!;
    const env0 = service.env(0);
    const config = join(dir, 'config.yaml');
    await writeFile(
      config,
      [
        'profiles:',
        '  us:',
        `    baseUrl: ${env0.FERRY_BASE_URL}`,
        `    settingsUrl: ${env0.FERRY_SETTINGS_URL}`,
        `    authUrl: ${env0.FERRY_AUTH_URL}`,
        `    audience: ${env0.FERRY_AUDIENCE}`,
        `    clientId: ${us.clientId}`,
        '    clientSecretEnv: US_SECRET',
        '',
      ].join('\n'),
    );
    const archive = join(dir, 'one.zip');
    await writeFile(archive, await playbookArchive(minimalEntries()));
    const before = [await playbookCount(0), await playbookCount(1)];

    // The other tenant's variables beside a named profile: refused, naming both, nothing created.
    const mixed = { ...env0, FERRY_CONFIG: config, US_SECRET: us.clientSecret };
    const doctor = await runFerry(['-p', 'us', 'doctor'], mixed);
    expect(doctor.code).toBe(2);
    expect(doctor.stderr).toMatch(/profile "us" is named, but FERRY_CLIENT_ID is set to ".*" and the profile says ".*"/);
    const refused = await runFerry(['playbooks', 'import', archive, '--mode', 'replay', '--to-profile', 'us', '--state', join(dir, 's1.sqlite'), '--json'], mixed);
    expect(refused.code).toBe(2);
    expect(onlyJson(refused)).toMatchObject({ status: 'error', exitCode: 2, error: expect.stringContaining('FERRY_CLIENT_ID') });
    expect([await playbookCount(0), await playbookCount(1)]).toEqual(before);

    // Only the other tenant's secret in the environment: the profile's own secret is used.
    const secretOnly = { FERRY_CONFIG: config, US_SECRET: us.clientSecret, FERRY_CLIENT_SECRET: service.emulator.tenants[0]!.clientSecret };
    const imported = await runFerry(['playbooks', 'import', archive, '--mode', 'replay', '--to-profile', 'us', '--state', join(dir, 's2.sqlite'), '--json'], secretOnly);
    expect(imported.code, imported.stderr).toBe(0);
    const summary = onlyJson(imported);
    const host = new URL(env0.FERRY_BASE_URL!).host;
    expect(summary.target).toEqual({ host, clientId: us.clientId, profile: 'us' });
    expect([await playbookCount(0), await playbookCount(1)]).toEqual([before[0], before[1]! + 1]);

    // The text summaries name the target too: a replay and a mirror.
    const again = await runFerry(['playbooks', 'import', archive, '--mode', 'replay', '--to-profile', 'us', '--state', join(dir, 's2.sqlite')], secretOnly);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`target: ${host}, client ${us.clientId}, profile us`);
    await writeTree(join(dir, 'src'), { 'a.txt': 'a' });
    const project = us.assistants[0]!.projectIdentifier;
    const mirrored = await runFerry(['-p', 'us', 'mirror', join(dir, 'src'), '--project', project, '--state', join(dir, 'm.sqlite')], secretOnly);
    expect(mirrored.code, mirrored.stderr).toBe(0);
    expect(mirrored.stdout).toContain(`target: ${host}, client ${us.clientId}, profile us`);
    const ok = await runFerry(['-p', 'us', 'doctor', '--json'], secretOnly);
    expect(JSON.parse(ok.stdout).target).toEqual({ host, clientId: us.clientId, profile: 'us' });
  });
});
