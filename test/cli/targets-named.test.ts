// Every write goes to the tenant the user named, and the summary names it: every command that
// runs a job (the list is the program's own, src/cli/metrics-options.ts), and every dry run, says
// host, client id and profile, in text and in JSON. A tenant read from (pull, export, backup) is
// named as such.
import { describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { useService, writeServiceProfiles, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { JOB_COMMANDS } from '../../src/cli/metrics-options.js';

const useEmulator = useService();

describe('every summary and every dry run names its tenant', () => {
  it('host, client id and profile, in text and in JSON, for each job command', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-targets-'));
    const env = { FERRY_CONFIG: writeServiceProfiles(useEmulator(), join(dir, 'profiles.yaml')) };
    const emu = useEmulator().emulator;
    const [one, two] = [emu.tenants[0]!, emu.tenants[1]!];
    const host = new URL(emu.baseUrl).host;
    const client = useEmulator().client();
    const project = (await client.projects.create({ name: 'targets named', description: 'issue 52' })).objectIdentifier;
    const playbook = (await client.playbooks.create({ name: 'targets named', isPrivate: false, organizationWide: true })).objectIdentifier;
    const src = join(dir, 'src');
    await writeTree(src, { 'a.txt': 'a', 'b/c.txt': 'c', 'bad\u0001.txt': 'refused' });
    const state = join(dir, 'state.sqlite');
    const job = join(dir, 'pull.yaml');
    await writeFile(job, `job: pull\nprofile: ${one.name}\nproject: ${project}\ndir: via-job\nstate: ${state}\n`);
    const p = ['-p', one.name];
    const zip = join(dir, 'playbook.zip');

    const seen = new Set<string>();
    /** Runs a command in text and in JSON; both must name the tenant (`tenant`, read from or written to). */
    const named = async (command: string, args: string[], expected: { tenant?: typeof one; reads?: boolean; dryRun?: boolean } = {}) => {
      seen.add(command);
      const tenant = expected.tenant ?? one;
      const label = expected.reads ? 'read from' : 'target';
      const text = await runFerry(args, env);
      expect(text.code, `${command}: ${text.stderr}`).toBeLessThan(2);
      expect(text.stdout, `${command} (text)`).toContain(`${host}, client ${tenant.clientId}, profile ${tenant.name}`);
      if (!expected.dryRun) expect(text.stdout, `${command} (text)`).toMatch(new RegExp(`${label}:? ${host.replace(/\./g, '\\.')}, client`));
      const json = onlyJson(await runFerry([...args, '--json'], env)) as { target?: { host: string; clientId: string; profile?: string }; to?: string };
      if (json.target) expect(json.target, `${command} (JSON)`).toEqual({ host, clientId: tenant.clientId, profile: tenant.name });
      else expect(json.to, `${command} (JSON)`).toBe(`${host}, client ${tenant.clientId}, profile ${tenant.name}`);
    };

    await named('mirror', [...p, 'mirror', src, '--project', project, '--state', state, '-n'], { dryRun: true });
    await named('mirror', [...p, 'mirror', src, '--project', project, '--state', state]);
    // The failed run (a refused name) resumed: its summary is a mirror's.
    const failed = (onlyJson(await runFerry([...p, 'jobs', 'list', '--state', state, '--json'], env)) as { items: { id: number; status: string }[] }).items.find((r) => r.status === 'failed')!;
    await named('jobs resume', [...p, 'jobs', 'resume', String(failed.id), '--state', state]);
    await named('upload', [...p, 'upload', src, '--project', project, '--playbook', playbook, '--to', 'Batch', '--state', state]);
    await named('pull', [...p, 'pull', project, join(dir, 'pulled'), '--state', state, '-n'], { reads: true, dryRun: true });
    await named('pull', [...p, 'pull', project, join(dir, 'pulled'), '--state', state], { reads: true });
    await named('run', ['run', job], { reads: true });
    await named('playbooks export', [...p, 'playbooks', 'export', playbook, '--out', zip, '--state', state], { reads: true });
    await named('playbooks backup', [...p, 'playbooks', 'backup', '--out', join(dir, 'backups'), '--state', state], { reads: true });
    await named('playbooks import', ['playbooks', 'import', zip, '--mode', 'replay', '--to-profile', two.name, '--state', state], { tenant: two });
    await named('migrate', ['migrate', '--from', one.name, '--to', two.name, '--projects', project, '--state', state, '-n'], { tenant: two, dryRun: true });
    await named('migrate', ['migrate', '--from', one.name, '--to', two.name, '--projects', project, '--state', state], { tenant: two });

    // Every command that runs a job was tried.
    expect([...seen].sort()).toEqual(Object.keys(JOB_COMMANDS).sort());
  });
});
