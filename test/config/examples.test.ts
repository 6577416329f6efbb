// The shipped examples stay valid, and mistakes in job files are named by field.
import { loadMapping } from '../../src/playbooks/mapping.js';
import { describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadConfigFile } from '../../src/config/profile.js';
import { loadDefinition } from '../../jobs/definition.js';
import { readManifest } from '../../src/manifest/read.js';

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
    if (loaded.kind !== 'mirror') throw new Error(loaded.kind);
    expect(loaded.mirror).toMatchObject({ source: '/srv/shares/contracts', to: 'Contracts/Share', ocrEngine: 'engineA', ocrStrategy: 'detect', concurrency: 8 });
    expect(loaded.profile).toBe('uk-prod');
    expect(loaded.rps).toBe(20);
  });
});

describe('config/manifest.example.csv', () => {
  it('is a manifest as Excel saves it (BOM, CRLF, quotes), read row by row with its metadata and settings', async () => {
    const rows = [];
    for await (const row of readManifest(join(repo, 'config', 'manifest.example.csv'))) rows.push(row);
    expect(rows.map((r) => r.path)).toEqual(['contracts/2019/acme-master-agreement.pdf', 'contracts/2019/globex-nda.docx', 'scans/Zürich office lease.pdf', 'notes/readme.txt']);
    expect(rows[0]).toMatchObject({ line: 2, metadata: { client: 'ACME, Inc.', contract: 'C-2019-001', matter: 'Supply', signed: '2019-03-14' }, settings: { ocrStrategy: 'always' } });
    expect(rows[1]!.metadata.matter).toBe('Project "Falcon"');
    expect(rows[1]!.settings).toEqual({});
    // Empty cells: no such key.
    expect(rows[3]).toMatchObject({ metadata: {}, settings: { ocrStrategy: 'never' } });
  });
});

describe('upload job definitions', () => {
  it('config/jobs/onboarding-upload.yaml is valid and overrides the retry policy', () => {
    const loaded = loadDefinition(join(repo, 'config', 'jobs', 'onboarding-upload.yaml'));
    if (loaded.kind !== 'upload') throw new Error(loaded.kind);
    expect(loaded.upload).toMatchObject({ playbook: '00000000-0000-0000-0000-000000000000', name: 'Archive 2019 onboarding', timeoutMs: 7_200_000, retryFailed: true });
    expect(loaded.upload!.policy!.reasons.outOfMemory).toBe('never');
    expect(loaded.upload!.policy!.reasons.uploadFailure).toBe('retry');
    expect(loaded.upload!.policy!.ocrFallback).toBe('never');
  });
});

describe('a job file for every kind of job', () => {
  it('config/jobs/nightly-pull.yaml, nightly-playbooks-backup.yaml and region-migration.yaml are valid, paths and durations read', () => {
    const jobs = join(repo, 'config', 'jobs');
    const pull = loadDefinition(join(jobs, 'nightly-pull.yaml'));
    if (pull.kind !== 'pull') throw new Error(pull.kind);
    expect(pull.pull).toMatchObject({ project: '00000000-0000-0000-0000-000000000000', dir: '/srv/copies/contracts', from: 'Contracts/Share', exclude: ['**/*.tmp'], concurrency: 8, bwlimit: 50 * 1024 * 1024 });
    expect([pull.profile, pull.rps, pull.metricsFile]).toEqual(['uk-prod', 20, '/var/lib/node_exporter/textfile/ferry-nightly-pull.prom']);

    const backup = loadDefinition(join(jobs, 'nightly-playbooks-backup.yaml'));
    if (backup.kind !== 'playbooks-backup') throw new Error(backup.kind);
    expect(backup.backup).toEqual({ out: '/srv/backups/playbooks', keep: undefined, keepDaily: 14, keepWeekly: 8, lock: { waitMs: 600_000 } });
    expect(backup.pushgateway).toBe('http://pushgateway.monitoring:9091');

    const migration = loadDefinition(join(jobs, 'region-migration.yaml'));
    if (migration.kind !== 'migrate') throw new Error(migration.kind);
    expect(migration.migrate).toMatchObject({ from: 'uk-prod', to: 'au-prod', verify: true });
    expect(migration.migrate.options).toMatchObject({ projects: ['00000000-0000-0000-0000-000000000000'], allPlaybooks: true, concurrency: 8, waitMs: 7_200_000, lock: { waitMs: 300_000 } });
    // The --map file beside it, read now.
    expect(migration.migrate.options.mapping?.organizationMetadata?.Region).toBe('7d1f0c9e-3b2a-4e5d-8c6f-1a2b3c4d5e6f');
    // The checkpoint store and the metrics are the target's.
    expect(migration.profile).toBe('au-prod');
  });

  it('names what is wrong in each kind: a migration without a selection, a pull without its folder, a backup with a stray key', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-job-kinds-'));
    const bad = async (name: string, text: string) => {
      await writeFile(join(dir, name), text);
      return () => loadDefinition(join(dir, name));
    };
    expect(await bad('m.yaml', 'job: migrate\nfrom: a\nto: b\n')).toThrow(/projects: name projects or playbooks \(ids, or all\)/);
    expect(await bad('m2.yaml', 'job: migrate\nfrom: a\nto: b\nprojects: [nope]\nshard: half\n')).toThrow(/projects\.0: must be a uuid[\s\S]*shard: must be K\/N/);
    expect(await bad('p.yaml', 'job: pull\nproject: 2b0c8a3e-1f7e-4c1e-9f0a-0c9e1d2b3a4f\n')).toThrow(/dir: /);
    expect(await bad('b.yaml', 'job: playbooks-backup\nout: x\nkeep: -1\nsource: y\n')).toThrow(/keep: [\s\S]*Unrecognized key: "source"/);
    expect(await bad('k.yaml', 'source: x\n')).toThrow(/job: required, one of mirror, upload, pull, playbooks-backup, migrate/);
  });
});

describe('job definitions', () => {
  const write = async (text: string) => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-job-'));
    await writeFile(join(dir, 'job.yaml'), text);
    return join(dir, 'job.yaml');
  };

  it('names each wrong field', async () => {
    // A project is named by its id or its name (docs/cli.md, *Names and ids*): an empty one is neither.
    const file = await write('job: mirror\nsource: ./share\nproject: " "\nconcurency: 3\nocr: { strategy: sometimes }\n');
    let message = '';
    try {
      loadDefinition(file);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/project: .*a project's id or its name/);
    expect(message).toContain('Unrecognized key: "concurency"');
    expect(message).toContain('ocr.strategy');
  });

  it('a key no setting declares: the nearest declared key of that kind of job is suggested, as a mistyped flag is', async () => {
    const near = await write('job: mirror\nsource: ./share\nproject: 2b0c8a3e-1f7e-4c1e-9f0a-0c9e1d2b3a4f\nmaxDuraton: 1h\nmanifestSheat: Akten\n');
    expect(() => loadDefinition(near)).toThrow(/\(did you mean maxDuration\?\) \(did you mean manifestSheet\?\)/);
    const far = await write('job: pull\nproject: 2b0c8a3e-1f7e-4c1e-9f0a-0c9e1d2b3a4f\ndest: ./out\nbanana: 1\n');
    expect(() => loadDefinition(far)).toThrow(/"banana" is no setting of a pull job/);
  });

  it('says a missing id is required, not that it is a malformed uuid', async () => {
    const file = await write('job: upload\nsource: ./share\n');
    expect(() => loadDefinition(file)).toThrow(/project: required.*playbook: required|playbook: required.*project: required/);
  });

  it('resolves relative paths against the file and refuses an unknown job kind', async () => {
    const file = await write('job: mirror\nsource: ./share\nproject: 2b0c8a3e-1f7e-4c1e-9f0a-0c9e1d2b3a4f\nstate: state.sqlite\n');
    const loaded = loadDefinition(file);
    if (loaded.kind !== 'mirror') throw new Error(loaded.kind);
    expect(loaded.mirror.source).toBe(join(file, '..', 'share'));
    expect(loaded.state).toBe(join(file, '..', 'state.sqlite'));
    const other = await write('job: teleport\nsource: x\n');
    expect(() => loadDefinition(other)).toThrow(/job: "teleport" is not a kind of job; one of mirror, upload, pull, playbooks-backup, migrate/);
    const badPolicy = await write('job: upload\nsource: x\nproject: 2b0c8a3e-1f7e-4c1e-9f0a-0c9e1d2b3a4f\nplaybook: 2b0c8a3e-1f7e-4c1e-9f0a-0c9e1d2b3a4f\ntimeout: soon\nretryPolicy: { reasons: { badFile: maybe } }\n');
    expect(() => loadDefinition(badPolicy)).toThrow(/timeout: must be a duration[\s\S]*retryPolicy\.reasons\.badFile/);
  });
});
