import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { Client, clientFor, expectNoContractViolations, projectOf, startTestEmulator } from './helpers.js';

let dataDir: string;
const running: EmulatorHandle[] = [];

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'ferry-emulator-'));
});
afterEach(async () => {
  for (const handle of running.splice(0)) {
    expectNoContractViolations(handle);
    await handle.close();
  }
  await rm(dataDir, { recursive: true, force: true });
});

async function start(processing?: { minDelayMs: number; maxDelayMs: number }) {
  const handle = await startTestEmulator({ dataDir, ...(processing ? { processing } : {}) });
  running.push(handle);
  return handle;
}

describe('persistence with dataDir', () => {
  it('keeps documents, their content, tokens and the seed across a restart', async () => {
    const first = await start();
    const client = await clientFor(first);
    const project = projectOf(first);
    const uploadIdentifier = randomUUID();
    const uploaded = await client.upload(project, 'kept.txt', 'survives restarts', { uploadIdentifier });
    await client.processed(project, uploadIdentifier);
    const description = first.describe();
    await first.close();
    running.length = 0;

    const second = await start();
    expect(second.describe().tenants).toEqual(description.tenants);
    // The signing key is stored with the state, so a token from before the restart still works.
    const again = new Client(second.baseUrl, client.bearer);
    const [document] = await again.processed(project, uploadIdentifier);
    expect(document).toMatchObject({ objectIdentifier: uploaded.body.objectIdentifier, uploadSuccessful: true });
    const content = await request(document.url, { headers: { authorization: `Bearer ${client.bearer}` } });
    expect(content.statusCode).toBe(200);
    expect(await content.body.text()).toBe('survives restarts');
  });

  it('resumes processing of documents left pending by the previous run', async () => {
    const first = await start({ minDelayMs: 3_600_000, maxDelayMs: 3_600_000 });
    const client = await clientFor(first);
    const project = projectOf(first);
    const uploadIdentifier = randomUUID();
    expect((await client.upload(project, 'pending.pdf', '%PDF-1.4 /Type /Page', { uploadIdentifier })).body.uploadInProgress).toBe(true);
    await first.close();
    running.length = 0;

    const second = await start({ minDelayMs: 1, maxDelayMs: 2 });
    const [document] = await new Client(second.baseUrl, client.bearer).processed(project, uploadIdentifier);
    expect(document).toMatchObject({ uploadSuccessful: true, pageCount: 1 });
  });
});
