import { copyFile, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultSeed, type EmulatorHandle, loadSeedFile } from '../../src/emulator/index.js';
import { ContractValidator, contractPath } from '../../src/emulator/http/validate.js';
import { clientFor, expectNoContractViolations, projectOf, startTestEmulator } from './helpers.js';

const running: EmulatorHandle[] = [];
const temporary: string[] = [];

afterEach(async () => {
  for (const handle of running.splice(0)) {
    expectNoContractViolations(handle);
    await handle.close();
  }
  for (const dir of temporary.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-seed-'));
  temporary.push(dir);
  return dir;
}

describe('seed files', () => {
  it('replaces the default seed', async () => {
    const dir = await tempDir();
    const path = join(dir, 'seed.json');
    const seed = {
      models: [],
      tenants: [
        {
          name: 'northwind',
          region: 'eu',
          clientId: 'nw-app',
          clientSecret: 'nw-app-secret',
          readOnlyClientId: 'nw-viewer',
          readOnlyClientSecret: 'nw-viewer-secret',
          projects: [{ objectIdentifier: randomUUID(), name: 'Northwind', assistants: [{ objectIdentifier: randomUUID(), name: 'Helper' }] }],
        },
      ],
    };
    await writeFile(path, JSON.stringify(seed));
    const handle = await startTestEmulator({ seed: loadSeedFile(path) });
    running.push(handle);
    expect(handle.describe().tenants).toEqual([
      {
        name: 'northwind',
        region: 'eu',
        clientId: 'nw-app',
        clientSecret: 'nw-app-secret',
        readOnlyClientId: 'nw-viewer',
        readOnlyClientSecret: 'nw-viewer-secret',
        organizationMetadata: [],
        assistants: [{ projectIdentifier: seed.tenants[0]!.projects[0]!.objectIdentifier, assistantIdentifier: seed.tenants[0]!.projects[0]!.assistants[0]!.objectIdentifier }],
      },
    ]);
    const client = await clientFor(handle);
    expect((await client.get('/projects')).body.items.map((p: { name: string }) => p.name)).toEqual(['Northwind']);
    expect(handle.credits('northwind')).toBe(1_000_000);
  });

  it('names what is wrong in an invalid seed file', async () => {
    const dir = await tempDir();
    const path = join(dir, 'bad.json');
    const seed = defaultSeed();
    (seed.tenants[0] as { region: string }).region = 'mars';
    await writeFile(path, JSON.stringify(seed));
    expect(() => loadSeedFile(path)).toThrow(/tenants\[0\]\.region|tenants\.0\.region/);
    expect(() => loadSeedFile(join(dir, 'missing.json'))).toThrow(/Cannot read seed file/);
  });

  it('covers every metadata data type, with options on the category ones', () => {
    const tenant = defaultSeed().tenants[0]!;
    expect(tenant.organizationMetadata!.map((d) => d.dataType).sort()).toEqual(['date', 'decimal', 'multiCategory', 'singleCategory', 'text', 'yesNo']);
    for (const definition of tenant.organizationMetadata!) {
      expect((definition.options ?? []).length > 0).toBe(definition.dataType.endsWith('Category'));
    }
  });
});

describe('signed blob URLs', () => {
  it('serves a blob without a token until the URL expires, and refuses tampered URLs', async () => {
    const handle = await startTestEmulator();
    running.push(handle);
    const client = await clientFor(handle);
    const project = projectOf(handle);
    const uploaded = await client.upload(project, 'shared.txt', 'shared content');
    const url = handle.signedBlobUrl(`documents/${uploaded.body.objectIdentifier}`, 60, 'text/plain');
    const ok = await request(url);
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['content-type']).toMatch(/^text\/plain/);
    expect(await ok.body.text()).toBe('shared content');
    const tampered = await request(url.replace('ct=text%2Fplain', 'ct=text%2Fhtml'));
    expect(tampered.statusCode).toBe(403);
    await tampered.body.dump();
    handle.advanceClock(61_000);
    const expired = await request(url);
    expect(expired.statusCode).toBe(403);
    await expired.body.dump();
  });
});

describe('contract validator', () => {
  const validator = new ContractValidator();

  it('accepts conforming responses and names mismatches', () => {
    expect(validator.check('GET', '/projects', 200, 'application/json', '{"items":[],"totalCount":0}').problem).toBeUndefined();
    expect(validator.check('GET', '/projects', 200, 'application/json', '{"items":[{"name":1}],"totalCount":0}').problem).toMatch(/\/items\/0/);
    expect(validator.check('GET', '/projects', 418, 'application/json', '{}').problem).toMatch(/Status 418 is not declared/);
    expect(validator.check('GET', '/projects', 200, 'text/html', '<p>').problem).toMatch(/Content type text\/html is not declared/);
    expect(validator.check('GET', '/nowhere', 200, 'application/json', '{}').problem).toMatch(/not in the contract/);
    expect(validator.check('DELETE', '/projects/:projectIdentifier', 204, undefined, undefined).problem).toBeUndefined();
  });

  it('is compiled once per file while the file is unchanged, and read again once it changes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-contract-'));
    try {
      const path = join(dir, 'openapi.yaml');
      await copyFile(contractPath(), path);
      const first = ContractValidator.of(path);
      expect(ContractValidator.of(path)).toBe(first);
      // The same file changed: a status the projects listing never had is declared now.
      const text = await readFile(path, 'utf8');
      await writeFile(path, text.replace(/(\n {2}\/projects:\n {4}get:\n(?:.*\n)*? {6}responses:\n)/, "$1        '418':\n          description: teapot\n"));
      await utimes(path, new Date(), new Date(Date.now() + 5_000));
      const changed = ContractValidator.of(path);
      expect(changed).not.toBe(first);
      expect(first.check('GET', '/projects', 418, undefined, undefined).problem).toMatch(/Status 418 is not declared/);
      expect(changed.check('GET', '/projects', 418, undefined, undefined).problem).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('turns a mismatch into a 500 naming it in throw mode', async () => {
    const handle = await startTestEmulator();
    running.push(handle);
    const client = await clientFor(handle);
    // A resource identifier that is not a string breaks the Notification schema on purpose.
    handle.notify('contoso', { title: 'x', message: 'y', type: 'test', resourceIdentifiers: { upload: 42 as unknown as string } });
    const res = await client.get('/notifications');
    expect(res.status).toBe(500);
    expect(res.body.detail).toMatch(/listNotifications/);
    expect(handle.contractViolations).toHaveLength(1);
    handle.contractViolations.length = 0;
  });
});
