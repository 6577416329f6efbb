// `ferry config list|show`: the profiles of the file in use, where each points, where its secret
// comes from; the secret itself never printed; a profile that is not there named with those that are.
import { describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { onlyJson, runFerry } from '../helpers/cli.js';

const SECRET = 'do-not-print-me-4a7f';

async function setup() {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-config-'));
  await writeFile(join(dir, 'secret'), `${SECRET}-file\n`);
  const file = join(dir, 'config.yaml');
  await writeFile(
    file,
    [
      'defaultProfile: uk-prod',
      'profiles:',
      '  uk-prod: { tenant: contoso, region: uk, domain: example.com, audience: https://api.example.com/v2, clientId: c-uk, clientSecretEnv: UK_SECRET }',
      `  local: { baseUrl: "http://127.0.0.1:4010", settingsUrl: "http://127.0.0.1:4010/settings", authUrl: "http://127.0.0.1:4010/auth", audience: a, clientId: c-local, clientSecretFile: ${join(dir, 'secret')} }`,
      '  half: { tenant: contoso, clientId: c-half }',
      '',
    ].join('\n'),
  );
  return { file, env: { FERRY_CONFIG: file, UK_SECRET: SECRET } };
}

describe('ferry config', () => {
  it('lists every profile: default marked, host, client id, where the secret comes from, what is missing', async () => {
    const { file, env } = await setup();
    const r = await runFerry(['config', 'list'], env);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe(`${file}: 3 profiles`);
    expect(lines[1]).toBe('* uk-prod  api.contoso.uk.example.com  client c-uk  secret from environment variable UK_SECRET (set)');
    expect(lines[2]).toMatch(/^ {2}local {2}127\.0\.0\.1:4010 {2}client c-local {2}secret from file .*secret \(readable\)$/);
    expect(lines[3]).toMatch(/^ {2}half {2}\(no address\) {2}client c-half .*\[no service address: set FERRY_REGION, FERRY_DOMAIN.*; no audience\]$/);
    const json = onlyJson(await runFerry(['config', 'list', '--json'], env)) as { profiles: { name: string; host?: string }[]; defaultProfile: string };
    expect(json.defaultProfile).toBe('uk-prod');
    expect(json.profiles.map((p) => p.name)).toEqual(['uk-prod', 'local', 'half']);
    expect(r.stdout + JSON.stringify(json)).not.toContain(SECRET);
  });

  it('shows one profile in full, the default when none is named, and never its secret', async () => {
    const { env } = await setup();
    const def = await runFerry(['config', 'show'], { ...env, FERRY_CLIENT_ID: 'other' });
    expect(def.code, def.stderr).toBe(0);
    expect(def.stdout).toContain('profile uk-prod (the default)');
    expect(def.stdout).toMatch(/base URL\s+https:\/\/api\.contoso\.uk\.example\.com/);
    expect(def.stdout).toContain('set in the environment: FERRY_CLIENT_ID');
    const local = await runFerry(['-p', 'local', 'config', 'show', '--json'], env);
    expect(onlyJson(local)).toMatchObject({ command: 'config show', profile: { name: 'local', clientId: 'c-local' } });
    expect(def.stdout + local.stdout).not.toContain(SECRET);
    const missing = await runFerry(['config', 'show', 'uk'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('profile "uk" not found');
    expect(missing.stderr).toContain('its profiles: uk-prod, local, half');
  });

  it('says so when there is no config file', async () => {
    const r = await runFerry(['config', 'list'], {});
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('no config file');
  });

  it('a service URL with credentials or a token in it: refused as an address, config show and doctor show them as *** or …, the password nowhere', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-config-urls-'));
    const file = join(dir, 'config.yaml');
    await writeFile(file, 'defaultProfile: p\nprofiles:\n  p: { baseUrl: "http://svcuser:SVCPASSWORD-71@127.0.0.1:9/", settingsUrl: "http://127.0.0.1:9/settings?token=SETTINGSTOKEN", authUrl: "http://127.0.0.1:9/auth", audience: a, clientId: c, clientSecretEnv: S }\n');
    const withUrls = { FERRY_CONFIG: file, S: 'x' };
    const show = await runFerry(['config', 'show'], withUrls);
    expect(show.code, show.stderr).toBe(0);
    // Refused as an address (the service is signed in to with the client id and secret), and said with *** for them.
    expect(show.stdout).toMatch(/baseUrl "http:\/\/\*\*\*@127\.0\.0\.1:9\/": credentials in the URL are not sent/);
    const json = await runFerry(['config', 'show', '--json'], withUrls);
    const doctor = await runFerry(['doctor', '--json'], withUrls);
    for (const out of [show, json, doctor]) expect(out.stdout + out.stderr).not.toMatch(/SVCPASSWORD|svcuser|SETTINGSTOKEN/);
  });
});
