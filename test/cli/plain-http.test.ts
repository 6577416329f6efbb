// The client secret and tokens over plain http go to this machine only, unless --allow-http says
// otherwise: an http address on another host (a `.invalid` name, so that no packet could leave) is
// refused before any request, naming the flag; with the flag the run goes on and says so.
import { describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { describeTarget } from '../../src/api/target.js';
import { FerryClient } from '../../src/api/client.js';

async function profileAt(authUrl: string): Promise<Record<string, string>> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-plain-http-'));
  const file = join(dir, 'config.yaml');
  await writeFile(file, `defaultProfile: p\nprofiles:\n  p: { baseUrl: "https://api.example.invalid", settingsUrl: "https://settings.example.invalid", authUrl: "${authUrl}", audience: a, clientId: c, clientSecretEnv: S }\n`);
  return { FERRY_CONFIG: file, S: 'the-secret-value' };
}

describe('plain http', () => {
  it('an http auth URL on another host is refused before any request, naming the flag; --allow-http lets the run try', async () => {
    const env = await profileAt('http://auth.example.invalid/token');
    const refused = await runFerry(['ls', '--json'], env);
    expect(refused.code).toBe(2);
    expect(onlyJson(refused).error).toMatch(/http:\/\/auth\.example\.invalid\/token: plain http to a host that is not this machine.*--allow-http \(FERRY_ALLOW_HTTP=1\)/);
    // Allowed: the run goes on to the network (and fails there: the name does not resolve), not refused for http.
    for (const allowed of [await runFerry(['ls', '--json', '--allow-http'], env), await runFerry(['ls', '--json'], { ...env, FERRY_ALLOW_HTTP: '1' })]) {
      expect(allowed.code).not.toBe(2);
      expect(allowed.stdout + allowed.stderr).not.toMatch(/plain http to a host/);
      expect(allowed.stdout + allowed.stderr).not.toContain('the-secret-value');
    }
  });

  it('loopback over http needs no flag; an allowed address is named wherever the target is', () => {
    const credentials = { clientId: 'c', clientSecret: 's', audience: 'a' };
    const local = new FerryClient({ address: { baseUrl: 'http://127.0.0.1:1', settingsUrl: 'http://localhost:1', authUrl: 'http://[::1]:1' }, credentials });
    expect(local.target.plainHttp).toBeUndefined();
    const far = new FerryClient({ address: { baseUrl: 'http://service.example.invalid', settingsUrl: 'https://s.example.invalid', authUrl: 'https://a.example.invalid' }, credentials, allowPlainHttp: true });
    expect(describeTarget(far.target)).toMatch(/, plain http to http:\/\/service\.example\.invalid \(--allow-http: the secret and tokens cross the network in clear\)$/);
    void local.close();
    void far.close();
  });
});
