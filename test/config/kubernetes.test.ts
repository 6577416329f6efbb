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

const dir = fileURLToPath(new URL('../../deploy/kubernetes', import.meta.url));
const KINDS = { CronJob, Job, ConfigMap, Secret } as const;

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
    const cron = all.find((d) => d.kind === 'CronJob')!;
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
});
