// `ferry migrate --from P --to P`: two tenants, each with its own client, address, credentials and
// rate limit from its own profile; FERRY_* variables do not turn both sides into one tenant.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Command } from 'commander';
import { openPairDeps } from '../../src/cli/shared.js';

const saved = { ...process.env };
afterEach(() => {
  process.env = { ...saved };
});

describe('openPairDeps', () => {
  it('gives each side its own profile: address, application and requestsPerSecond', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-pair-'));
    const config = join(dir, 'config.yaml');
    const side = (name: string, port: number, rps: number) =>
      [`  ${name}:`, `    baseUrl: http://127.0.0.1:${port}`, `    settingsUrl: http://127.0.0.1:${port}/settings`, `    authUrl: http://127.0.0.1:${port}/auth`, '    audience: https://api.example.test/v2', `    clientId: ${name}-app`, `    clientSecretEnv: SECRET_${name.toUpperCase()}`, `    requestsPerSecond: ${rps}`].join('\n');
    await writeFile(config, `profiles:\n${side('uk', 4101, 5)}\n${side('us', 4102, 40)}\n`);
    process.env.SECRET_UK = 'uk-secret';
    process.env.SECRET_US = 'us-secret';
    // Set for single-tenant commands; a migration must not let them make both sides one tenant.
    process.env.FERRY_BASE_URL = 'http://127.0.0.1:9999';
    process.env.FERRY_CLIENT_ID = 'env-app';
    const program = new Command().option('--config <file>').option('--profile <name>');
    program.parse(['node', 'ferry', '--config', config]);
    const deps = openPairDeps(program, 'uk', 'us', 4, join(dir, 'state.sqlite'));
    try {
      expect(deps.from.transport.address.baseUrl).toBe('http://127.0.0.1:4101');
      expect(deps.to.transport.address.baseUrl).toBe('http://127.0.0.1:4102');
      expect(deps.from.transport.requestsPerSecond).toBe(5);
      expect(deps.to.transport.requestsPerSecond).toBe(40);
      expect(deps.from.transport.tokens.identity).not.toBe(deps.to.transport.tokens.identity);
    } finally {
      await deps.close();
    }
  });
});
