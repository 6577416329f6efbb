// The shipped examples stay valid, and mistakes in job files are named by field.
import { loadMapping } from '../../src/playbooks/mapping.js';
import { describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadConfigFile } from '../../src/config/profile.js';
import { loadDefinition } from '../../jobs/definition.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));

describe('shipped examples', () => {
  it('config/profiles.example.yaml is a valid profile file', () => {
    const config = loadConfigFile(join(repo, 'config', 'profiles.example.yaml'));
    expect(Object.keys(config.profiles)).toEqual(['uk-prod', 'au-prod', 'local']);
  });

  it('config/playbook-map.example.yaml is a valid --map file, and a bad one is named by its field', async () => {
    const mapping = loadMapping(join(repo, 'config', 'playbook-map.example.yaml'));
    expect(mapping.organizationMetadata?.Region).toBe('7d1f0c9e-3b2a-4e5d-8c6f-1a2b3c4d5e6f');
    expect(Object.keys(mapping.options ?? {})).toHaveLength(1);
    const dir = await mkdtemp(join(tmpdir(), 'ferry-map-'));
    await writeFile(join(dir, 'bad.yaml'), 'organizationMetadata:\n  Region: not-an-id\nextra: 1\n');
    expect(() => loadMapping(join(dir, 'bad.yaml'))).toThrow(/--map .*bad\.yaml: .*organizationMetadata\.Region.*must be a uuid/);
  });

  it('config/jobs/nightly-mirror.yaml is a valid job definition', () => {
    const loaded = loadDefinition(join(repo, 'config', 'jobs', 'nightly-mirror.yaml'));
    expect(loaded.mirror).toMatchObject({ source: '/srv/shares/contracts', to: 'Contracts/Share', ocrEngine: 'engineA', ocrStrategy: 'detect', concurrency: 8 });
    expect(loaded.profile).toBe('uk-prod');
    expect(loaded.rps).toBe(20);
  });
});

describe('upload job definitions', () => {
  it('config/jobs/onboarding-upload.yaml is valid and overrides the retry policy', () => {
    const loaded = loadDefinition(join(repo, 'config', 'jobs', 'onboarding-upload.yaml'));
    expect(loaded.upload).toMatchObject({ playbook: '00000000-0000-0000-0000-000000000000', name: 'Archive 2019 onboarding', timeoutMs: 7_200_000, retryFailed: true });
    expect(loaded.upload!.policy!.reasons.outOfMemory).toBe('never');
    expect(loaded.upload!.policy!.reasons.uploadFailure).toBe('retry');
    expect(loaded.upload!.policy!.ocrFallback).toBe('never');
  });
});

describe('job definitions', () => {
  const write = async (text: string) => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-job-'));
    await writeFile(join(dir, 'job.yaml'), text);
    return join(dir, 'job.yaml');
  };

  it('names each wrong field', async () => {
    const file = await write('job: mirror\nsource: ./share\nproject: nope\nconcurency: 3\nocr: { strategy: sometimes }\n');
    let message = '';
    try {
      loadDefinition(file);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('project: must be a uuid');
    expect(message).toContain('Unrecognized key: "concurency"');
    expect(message).toContain('ocr.strategy');
  });

  it('says a missing id is required, not that it is a malformed uuid', async () => {
    const file = await write('job: upload\nsource: ./share\n');
    expect(() => loadDefinition(file)).toThrow(/project: required.*playbook: required|playbook: required.*project: required/);
  });

  it('resolves relative paths against the file and refuses an unknown job kind', async () => {
    const file = await write('job: mirror\nsource: ./share\nproject: 2b0c8a3e-1f7e-4c1e-9f0a-0c9e1d2b3a4f\nstate: state.sqlite\n');
    const loaded = loadDefinition(file);
    expect(loaded.mirror.source).toBe(join(file, '..', 'share'));
    expect(loaded.state).toBe(join(file, '..', 'state.sqlite'));
    const other = await write('job: teleport\nsource: x\n');
    expect(() => loadDefinition(other)).toThrow(/job/);
    const badPolicy = await write('job: upload\nsource: x\nproject: 2b0c8a3e-1f7e-4c1e-9f0a-0c9e1d2b3a4f\nplaybook: 2b0c8a3e-1f7e-4c1e-9f0a-0c9e1d2b3a4f\ntimeout: soon\nretryPolicy: { reasons: { badFile: maybe } }\n');
    expect(() => loadDefinition(badPolicy)).toThrow(/timeout: must be a duration[\s\S]*retryPolicy\.reasons\.badFile/);
  });
});
