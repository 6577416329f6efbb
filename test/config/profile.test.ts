import { describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { resolveSettings } from '../../src/config/profile.js';

async function configFile(text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-config-'));
  const path = join(dir, 'config.yaml');
  await writeFile(path, text);
  return path;
}

const env = { FERRY_CLIENT_SECRET: 'from-env' };

describe('profiles', () => {
  it('reads a profile chosen by FERRY_PROFILE and lets FERRY_* variables override it', async () => {
    const file = await configFile('profiles:\n  prod:\n    tenant: contoso\n    region: uk\n    domain: example.com\n    audience: https://aud\n    clientId: app1\n');
    const s = resolveSettings({ configFile: file, env: { ...env, FERRY_PROFILE: 'prod', FERRY_CLIENT_ID: 'app2' } });
    expect(s.clientOptions.address).toEqual({ tenant: 'contoso', region: 'uk', domain: 'example.com', authUrl: undefined });
    expect(s.clientOptions.credentials).toEqual({ clientId: 'app2', clientSecret: 'from-env', audience: 'https://aud' });
  });

  it('uses a profile named on the command line alone: a disagreeing FERRY_* variable is refused, naming both', async () => {
    const file = await configFile('profiles:\n  prod:\n    tenant: contoso\n    region: uk\n    domain: example.com\n    audience: https://aud\n    clientId: app1\n    clientSecretEnv: PROD_SECRET\n');
    expect(() => resolveSettings({ profile: 'prod', configFile: file, env: { ...env, PROD_SECRET: 's', FERRY_CLIENT_ID: 'app2' } })).toThrow(
      /profile "prod" is named, but FERRY_CLIENT_ID is set to "app2" and the profile says "app1"/,
    );
    expect(() => resolveSettings({ profile: 'prod', configFile: file, env: { ...env, PROD_SECRET: 's', FERRY_BASE_URL: 'http://elsewhere' } })).toThrow(/FERRY_BASE_URL .* sets no baseUrl/);
    // Agreeing variables are harmless; the profile's own secret wins over FERRY_CLIENT_SECRET.
    const s = resolveSettings({ profile: 'prod', configFile: file, env: { ...env, PROD_SECRET: 'own', FERRY_CLIENT_ID: 'app1', FERRY_LOG_LEVEL: 'debug' } });
    expect(s.clientOptions.credentials).toEqual({ clientId: 'app1', clientSecret: 'own', audience: 'https://aud' });
  });

  it('takes the secret from the variable or file the profile names', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-secret-'));
    await writeFile(join(dir, 'secret'), 'from-file\n');
    const file = await configFile(
      `profiles:\n  a:\n    baseUrl: http://127.0.0.1:1\n    settingsUrl: http://127.0.0.1:1/settings\n    authUrl: http://127.0.0.1:1/auth\n    audience: x\n    clientId: c\n    clientSecretFile: ${join(dir, 'secret')}\n  b:\n    baseUrl: http://127.0.0.1:1\n    settingsUrl: http://127.0.0.1:1/settings\n    authUrl: http://127.0.0.1:1/auth\n    audience: x\n    clientId: c\n    clientSecretEnv: MY_SECRET\n`,
    );
    expect(resolveSettings({ profile: 'a', configFile: file, env: {} }).clientOptions.credentials.clientSecret).toBe('from-file');
    expect(resolveSettings({ profile: 'b', configFile: file, env: { MY_SECRET: 'named' } }).clientOptions.credentials.clientSecret).toBe('named');
    expect(() => resolveSettings({ profile: 'b', configFile: file, env: {} })).toThrow('clientSecretEnv names MY_SECRET, but that variable is not set');
  });

  it('refuses a secret written into the profile, without echoing it', async () => {
    const file = await configFile('profiles:\n  bad:\n    clientId: c\n    clientSecret: hunter2\n');
    let message = '';
    try {
      resolveSettings({ profile: 'bad', configFile: file, env: {} });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('profiles.bad.clientSecret: secrets are not accepted in a profile');
    expect(message).not.toContain('hunter2');
  });

  it('names unknown fields and bad values', async () => {
    const file = await configFile('profiles:\n  p:\n    tenantt: x\n    requestsPerSecond: -1\n');
    expect(() => resolveSettings({ profile: 'p', configFile: file, env })).toThrow(/profiles\.p/);
    expect(() => resolveSettings({ profile: 'p', configFile: file, env })).toThrow(/requestsPerSecond/);
  });

  it('with no profile and no config file, says where a profile would come from (FERRY_CONFIG, --config, the default path)', () => {
    const noFile = { XDG_CONFIG_HOME: '/nonexistent/xdg' };
    expect(() => resolveSettings({ env: noFile })).toThrow(/no service address: .*; or use a profile: --config FILE or FERRY_CONFIG, and -p NAME \(no config file at \/nonexistent\/xdg\/ferry\/config\.yaml\)/);
    expect(() => resolveSettings({ env: { ...noFile, FERRY_BASE_URL: 'http://a', FERRY_SETTINGS_URL: 'http://a', FERRY_AUTH_URL: 'http://a' } })).toThrow(/missing client id.*or use a profile: --config FILE or FERRY_CONFIG/);
  });

  it('reads the listing lag from the profile, FERRY_LISTING_LAG over it, even for a named profile; a bad one names its source', async () => {
    const file = await configFile('profiles:\n  p:\n    baseUrl: http://a\n    settingsUrl: http://a\n    authUrl: http://a\n    audience: x\n    clientId: c\n    listingLag: 4s\n');
    expect(resolveSettings({ profile: 'p', configFile: file, env }).clientOptions.listingLagMs).toBe(4_000);
    expect(resolveSettings({ profile: 'p', configFile: file, env: { ...env, FERRY_LISTING_LAG: '1500ms' } }).clientOptions.listingLagMs).toBe(1_500);
    expect(() => resolveSettings({ profile: 'p', configFile: file, env: { ...env, FERRY_LISTING_LAG: '-1s' } })).toThrow(/FERRY_LISTING_LAG "-1s" is negative/);
    const bad = await configFile('profiles:\n  p:\n    baseUrl: http://a\n    settingsUrl: http://a\n    authUrl: http://a\n    audience: x\n    clientId: c\n    listingLag: soon\n');
    expect(() => resolveSettings({ profile: 'p', configFile: bad, env })).toThrow(/profile "p": listingLag "soon" is not a duration/);
  });

  it('reads where the service reads form fields from the profile or FERRY_FORM_ORDER; a bad one names its source', async () => {
    const file = await configFile('profiles:\n  p:\n    baseUrl: http://a\n    settingsUrl: http://a\n    authUrl: http://a\n    audience: x\n    clientId: c\n    formOrder: any\n');
    expect(resolveSettings({ profile: 'p', configFile: file, env }).clientOptions.formOrder).toBe('any');
    const plain = { ...env, FERRY_BASE_URL: 'http://a', FERRY_SETTINGS_URL: 'http://a', FERRY_AUTH_URL: 'http://a', FERRY_AUDIENCE: 'x', FERRY_CLIENT_ID: 'c' };
    expect(resolveSettings({ env: plain }).clientOptions.formOrder).toBeUndefined();
    expect(resolveSettings({ env: { ...plain, FERRY_FORM_ORDER: 'fields-first' } }).clientOptions.formOrder).toBe('fields-first');
    expect(() => resolveSettings({ env: { ...plain, FERRY_FORM_ORDER: 'sometimes' } })).toThrow(/FERRY_FORM_ORDER: "sometimes" is not a form order \(fields-first or any\)/);
    const bad = await configFile('profiles:\n  p:\n    baseUrl: http://a\n    settingsUrl: http://a\n    authUrl: http://a\n    audience: x\n    clientId: c\n    formOrder: later\n');
    expect(() => resolveSettings({ profile: 'p', configFile: bad, env })).toThrow(/formOrder/);
  });

  it('lists everything that is missing', () => {
    expect(() => resolveSettings({ env: { FERRY_TENANT: 't', FERRY_REGION: 'uk', FERRY_DOMAIN: 'example.com' } })).toThrow(
      /missing client id .*; audience .*; client secret/,
    );
    expect(() => resolveSettings({ env: {} })).toThrow(/no service address: set FERRY_TENANT, FERRY_REGION, FERRY_DOMAIN/);
  });

  it('says which profile was not found, and which there are', async () => {
    const file = await configFile('profiles: {}\n');
    expect(() => resolveSettings({ profile: 'nope', configFile: file, env })).toThrow(`profile "nope" not found in ${file}; it has no profiles`);
    const two = await configFile('profiles:\n  uk-prod: { clientId: a }\n  local: { clientId: b }\n');
    expect(() => resolveSettings({ profile: 'uk', configFile: two, env })).toThrow(`profile "uk" not found in ${two}; its profiles: uk-prod, local`);
  });
});
