// deploy/kubernetes: every manifest is valid against the Kubernetes schemas (kubernetes-models),
// and says what docs/scale-out.md promises: the nightly CronJob keeps no volume for its state, the
// migration is an Indexed Job whose pods take --shard K/N from JOB_COMPLETION_INDEX, and secrets
// come from a Secret, never from the manifest's own text.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { CronJob } from 'kubernetes-models/batch/v1/CronJob';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { loadDefinition } from '../../jobs/definition.js';

const dir = fileURLToPath(new URL('../../deploy/kubernetes', import.meta.url));
const KINDS = { CronJob, Job, ConfigMap, Secret, PersistentVolumeClaim } as const;

function manifests(): { file: string; doc: Record<string, any> }[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((file) => parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((d) => ({ file, doc: d.toJS() as Record<string, any> })));
}

describe('deploy/kubernetes', () => {
  it('holds only valid objects of known kinds', () => {
    const all = manifests();
    expect(all.length).toBeGreaterThanOrEqual(4);
    for (const { file, doc } of all) {
      const Model = KINDS[doc.kind as keyof typeof KINDS];
      expect(Model, `${file}: kind ${doc.kind}`).toBeDefined();
      expect(() => new Model(doc as never).validate(), `${file}: ${doc.kind} ${doc.metadata?.name}`).not.toThrow();
    }
  });

  it('a nightly mirror with no persistent volume, and a sharded migration as an Indexed Job', () => {
    const all = manifests().map((m) => m.doc);
    const cron = all.find((d) => d.kind === 'CronJob' && d.metadata.name === 'ferry-nightly-mirror')!;
    const pod = cron.spec.jobTemplate.spec.template.spec;
    expect(cron.spec.concurrencyPolicy).toBe('Forbid');
    expect(pod.volumes.some((v: Record<string, unknown>) => 'persistentVolumeClaim' in v)).toBe(false);
    expect(pod.containers[0].args).toContain('mirror');

    const job = all.find((d) => d.kind === 'Job')!;
    expect(job.spec.completionMode).toBe('Indexed');
    expect(job.spec.completions).toBe(job.spec.parallelism);
    const command = job.spec.template.spec.containers[0].args.join(' ');
    expect(command).toContain(`--shard "$((JOB_COMPLETION_INDEX + 1))/${job.spec.completions}"`);

    // Every secret variable comes from the Secret by reference.
    for (const c of [...pod.containers, ...job.spec.template.spec.containers]) {
      for (const e of c.env.filter((x: { name: string }) => /SECRET/.test(x.name))) expect(e.valueFrom.secretKeyRef.name).toBe('ferry-credentials');
    }
  });

  it('a nightly playbooks backup runs its job file from a ConfigMap, and keeps its archives on a persistent volume', () => {
    const all = manifests().map((m) => m.doc);
    const cron = all.find((d) => d.kind === 'CronJob' && d.metadata.name === 'ferry-nightly-playbooks-backup')!;
    expect(cron.spec.concurrencyPolicy).toBe('Forbid');
    const pod = cron.spec.jobTemplate.spec.template.spec;
    const container = pod.containers[0];
    expect(container.args.slice(0, 2)).toEqual(['run', '/etc/ferry/jobs/nightly-playbooks-backup.yaml']);
    // The job file, as the ConfigMap holds it, is a valid playbooks-backup job into the volume.
    const jobVolume = pod.volumes.find((v: { configMap?: { name: string } }) => v.configMap?.name === 'ferry-backup-job');
    const mount = container.volumeMounts.find((m: { name: string }) => m.name === jobVolume.name);
    expect(mount.mountPath).toBe('/etc/ferry/jobs');
    const configMap = all.find((d) => d.kind === 'ConfigMap' && d.metadata.name === 'ferry-backup-job')!;
    const file = join(mkdtempSync(join(tmpdir(), 'ferry-k8s-')), 'nightly-playbooks-backup.yaml');
    writeFileSync(file, configMap.data['nightly-playbooks-backup.yaml']);
    const loaded = loadDefinition(file);
    expect(loaded.kind).toBe('playbooks-backup');
    if (loaded.kind !== 'playbooks-backup') return;
    const backups = pod.volumes.find((v: { persistentVolumeClaim?: unknown }) => v.persistentVolumeClaim);
    expect(all.some((d) => d.kind === 'PersistentVolumeClaim' && d.metadata.name === backups.persistentVolumeClaim.claimName)).toBe(true);
    const backupMount = container.volumeMounts.find((m: { name: string }) => m.name === backups.name);
    expect(loaded.backup.out.startsWith(`${backupMount.mountPath}/`)).toBe(true);
    // Its state need not survive: an emptyDir, as the mirror's.
    const state = container.volumeMounts.find((m: { mountPath: string }) => m.mountPath === '/var/lib/ferry');
    expect(pod.volumes.find((v: { name: string }) => v.name === state.name).emptyDir).toEqual({});
    for (const e of container.env.filter((x: { name: string }) => /SECRET/.test(x.name))) expect(e.valueFrom.secretKeyRef.name).toBe('ferry-credentials');
  });
});
