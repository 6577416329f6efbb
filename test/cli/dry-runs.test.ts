// Dry runs name what a run would do, for every job kind: text lists the first 20 and says how many
// more, --json lists every one in one object; an upload job's dry run plans its files and creates
// no batch. Against the emulator over loopback, as a user runs them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

let service: Service;
let env: Record<string, string>;
let dir: string;
const files: Record<string, string> = {};
for (let i = 0; i < 25; i++) files[`d/file-${String(i).padStart(2, '0')}.txt`] = `content ${i}`;

beforeAll(async () => {
  service = await startService();
  env = service.env(0);
  dir = await mkdtemp(join(tmpdir(), 'ferry-dry-'));
  await writeTree(join(dir, 'src'), files);
});
afterAll(() => service.close());

describe('dry runs name what they would do', () => {
  it('mirror: 20 names in text and how many more, every one under --json; nothing written', async () => {
    const client = service.client();
    const project = (await client.projects.create({ name: 'dry mirror', description: '' })).objectIdentifier;
    const args = ['mirror', join(dir, 'src'), '--project', project, '--dry-run', '--state', join(dir, 'm.sqlite')];
    const text = await runFerry(args, env);
    expect(text.code, text.stderr).toBe(0);
    const named = text.stdout.split('\n').filter((l) => l.startsWith('  upload, new: '));
    expect(named).toHaveLength(20);
    expect(named[0]).toBe('  upload, new: d/file-00.txt (9 B)');
    expect(text.stdout).toContain('  … and 5 more (--json lists every one)');
    const json = onlyJson(await runFerry([...args, '--json'], env)) as { command: string; items: { action: string; key: string; size: number }[]; itemCount: number; counts: { new: number }; dryRun: boolean };
    expect(json).toMatchObject({ command: 'mirror', status: 'planned', dryRun: true, counts: { new: 25 }, itemCount: 25 });
    expect(json.items.map((i) => i.key).sort()).toEqual(Object.keys(files).sort());
    expect(json.items.every((i) => i.action === 'new')).toBe(true);

    // The target named as a run names it, and the project a name resolves to, by id and name, with the folder.
    const byName = await runFerry(['mirror', join(dir, 'src'), '--project', 'dry mirror', '--to', 'Intake/2026', '--dry-run'], env);
    expect(byName.code, byName.stderr).toBe(0);
    expect(byName.stdout).toMatch(/^ {2}target: 127\.0\.0\.1:\d+, client /m);
    expect(byName.stdout).toContain(`  into: project "dry mirror" (${project}), folder /Intake/2026`);
    const byNameJson = onlyJson(await runFerry(['mirror', join(dir, 'src'), '--project', 'dry mirror', '--to', 'Intake/2026', '--dry-run', '--json'], env));
    expect(byNameJson).toMatchObject({ project: { id: project, name: 'dry mirror' }, folder: '/Intake/2026', target: { clientId: expect.any(String) } });
    expect((await client.documents.list(project).all()).length).toBe(0);
  });

  it('run FILE --dry-run plans an upload job and creates no batch', async () => {
    const client = service.client();
    const project = (await client.projects.create({ name: 'dry upload', description: '' })).objectIdentifier;
    const playbook = (await client.playbooks.create({ name: 'dry upload', isPrivate: false, organizationWide: true })).objectIdentifier;
    const job = join(dir, 'upload.yaml');
    await writeFile(job, `job: upload\nsource: ./src\nproject: ${project}\nplaybook: ${playbook}\nstate: u.sqlite\n`);
    const json = onlyJson(await runFerry(['run', job, '--dry-run', '--json'], env)) as { command: string; counts: { new: number }; itemCount: number };
    expect(json).toMatchObject({ command: 'run', counts: { new: 25 }, itemCount: 25 });
    expect(await client.documentUploads.list(playbook).all()).toEqual([]);
    expect((await client.documents.list(project).all()).length).toBe(0);
  });

  it('pull: names what it would download', async () => {
    const client = service.client();
    const project = (await client.projects.create({ name: 'dry pull', description: '' })).objectIdentifier;
    const mirrored = await runFerry(['mirror', join(dir, 'src'), '--project', project, '--state', join(dir, 'p-mirror.sqlite'), '--json'], env);
    expect(onlyJson(mirrored)).toMatchObject({ status: 'succeeded' });
    const text = await runFerry(['pull', project, join(dir, 'out'), '--dry-run', '--state', join(dir, 'p.sqlite')], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.split('\n').filter((l) => l.startsWith('  download, new: '))).toHaveLength(20);
    expect(text.stdout).toContain('  … and 5 more (--json lists every one)');
    const json = onlyJson(await runFerry(['pull', project, join(dir, 'out'), '--dry-run', '--json', '--state', join(dir, 'p.sqlite')], env)) as { command: string; itemCount: number };
    expect(json).toMatchObject({ command: 'pull', itemCount: 25 });
  });
});
