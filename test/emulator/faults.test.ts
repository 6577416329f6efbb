import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatorHandle, parseFaultSpec } from '../../src/emulator/index.js';
import { type Client, clientFor, expectNoContractViolations, projectOf, startTestEmulator, token } from './helpers.js';

describe('parseFaultSpec', () => {
  it('parses every kind', () => {
    expect(parseFaultSpec('429=0.05,500=0.01,502=0.02,503=0.05,reset=0.02,reset-after=0.01,latency=20,seed=7,fail.uploadFailure=0.1')).toEqual({
      probabilities: { '429': 0.05, '500': 0.01, '502': 0.02, '503': 0.05, reset: 0.02, 'reset-after': 0.01 },
      latencyMs: 20,
      seed: 7,
      failReasons: { uploadFailure: 0.1 },
    });
    expect(parseFaultSpec('')).toEqual({ probabilities: {}, failReasons: {} });
    // Drawn apart from the HTTP faults: it may stand beside them at any probability.
    expect(parseFaultSpec('503=1,corrupt=0.5')).toEqual({ probabilities: { '503': 1 }, failReasons: {}, corrupt: 0.5 });
  });

  it('names what is wrong', () => {
    expect(() => parseFaultSpec('504=0.1')).toThrow(/Unknown fault kind "504"/);
    expect(() => parseFaultSpec('503=abc')).toThrow(/"503" needs a probability between 0 and 1, got "abc"/);
    expect(() => parseFaultSpec('503=1.5')).toThrow(/"503"/);
    expect(() => parseFaultSpec('latency=-3')).toThrow(/"latency" needs a whole number/);
    expect(() => parseFaultSpec('seed')).toThrow(/"seed" is not KIND=VALUE/);
    expect(() => parseFaultSpec('fail.nope=0.1')).toThrow(/Unknown fault kind "fail.nope"/);
    expect(() => parseFaultSpec('500=0.6,503=0.6')).toThrow(/add up to more than 1/);
    expect(() => parseFaultSpec('corrupt=2')).toThrow(/"corrupt" needs a probability between 0 and 1, got "2"/);
  });
});

describe('injected faults over HTTP', () => {
  let handle: EmulatorHandle;
  let client: Client;

  beforeAll(async () => {
    handle = await startTestEmulator();
    client = await clientFor(handle);
  });
  afterAll(() => handle.close());
  afterEach(() => {
    handle.setFaults({});
    expectNoContractViolations(handle);
  });

  it('fires a targeted 503 rule exactly N times, with Retry-After and without doing the work', async () => {
    handle.setFaults({ rules: [{ method: 'POST', path: /\/documents$/, kind: '503', times: 2 }] });
    const project = projectOf(handle);
    const uploadIdentifier = randomUUID();
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      const res = await client.upload(project, 'retry.txt', 'x', { uploadIdentifier });
      statuses.push(res.status);
      if (res.status === 503) {
        expect(res.headers['retry-after']).toBe('1');
        expect(res.body).toMatchObject({ status: 503 });
      }
    }
    expect(statuses).toEqual([503, 503, 200, 200]);
    expect((await client.processed(project, uploadIdentifier)).length).toBe(2);
    expect((await client.get('/projects')).status).toBe(200);
  });

  it('reproduces the same fault sequence for the same seed and spares the token endpoint', async () => {
    const run = async () => {
      handle.setFaults('429=0.3,503=0.3,seed=11');
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push((await client.get('/projects')).status);
      return statuses;
    };
    const first = await run();
    expect(new Set(first)).toEqual(new Set([200, 429, 503]));
    expect(await run()).toEqual(first);
    handle.setFaults('503=1');
    expect(await token(handle)).toBeTruthy();
    expect((await client.get('/projects')).status).toBe(503);
  });

  it('resets the connection before the request is handled', async () => {
    handle.setFaults({ rules: [{ method: 'POST', path: '/projects', kind: 'reset', times: 1 }] });
    await expect(client.post('/projects', { name: 'Never created', description: null })).rejects.toThrow();
    const listed = await client.get('/projects', { searchText: 'Never created' });
    expect(listed.body.totalCount).toBe(0);
  });

  it('resets the connection after the work was done (reset-after)', async () => {
    handle.setFaults({ rules: [{ method: 'POST', path: '/projects', kind: 'reset-after', times: 1 }] });
    await expect(client.post('/projects', { name: 'Created anyway', description: null })).rejects.toThrow();
    const listed = await client.get('/projects', { searchText: 'Created anyway' });
    expect(listed.body.totalCount).toBe(1);
  });

  it('can target the token endpoint explicitly', async () => {
    handle.setFaults({ rules: [{ path: '/auth/oauth/token', kind: '500', times: 1 }] });
    const { request } = await import('undici');
    const res = await request(`${handle.authUrl}/oauth/token`, { method: 'POST', body: '' });
    expect(res.statusCode).toBe(500);
    await res.body.dump();
    expect(await token(handle)).toBeTruthy();
  });
});

describe('rate limit', () => {
  let handle: EmulatorHandle;

  beforeAll(async () => {
    // A refill this slow makes the outcome independent of how fast the test runs.
    handle = await startTestEmulator({ rateLimit: { rps: 0.001, burst: 2 } });
  });
  afterAll(() => handle.close());
  afterEach(() => expectNoContractViolations(handle));

  it('answers 429 with Retry-After once a client’s bucket is empty, per client', async () => {
    const client = await clientFor(handle);
    expect((await client.get('/projects')).status).toBe(200);
    expect((await client.get('/projects')).status).toBe(200);
    const limited = await client.get('/projects');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const other = await clientFor(handle, 1);
    expect((await other.get('/projects')).status).toBe(200);
  });
});
