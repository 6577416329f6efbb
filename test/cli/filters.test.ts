// --min-size/--max-size/--min-age/--max-age in mirror and pull, against the emulator over loopback:
// the files outside the limits are neither carried nor counted, nor later taken for files gone
// from the source; a run without the limits carries the rest. And one pattern syntax: --include,
// --exclude and --filter-from pick the same paths from a folder, a zip and a project; --bwlimit
// carries every byte through its budget.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { remoteFiles, startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { patchName, zipOf } from '../helpers/archives.js';

let service: Service;
let dir: string;
beforeAll(async () => {
  service = await startService();
  dir = await mkdtemp(join(tmpdir(), 'ferry-filters-'));
  await writeTree(join(dir, 'src'), { 'small.txt': 'x'.repeat(10), 'big.txt': 'x'.repeat(5000), 'old.txt': 'x'.repeat(100), 'new.txt': 'x'.repeat(100) });
  const longAgo = new Date(Date.now() - 10 * 24 * 3_600_000);
  await utimes(join(dir, 'src', 'old.txt'), longAgo, longAgo);
});
afterAll(() => service.close());

type Summary = { counts: Record<string, number>; deletedLocally: { count: number } };

describe('size and age filters', () => {
  it('mirror carries only what lies inside the limits, then the rest when they are lifted', async () => {
    const client = service.client();
    const project = (await client.projects.create({ name: 'filters', description: '' })).objectIdentifier;
    const base = ['mirror', join(dir, 'src'), '--project', project, '--state', join(dir, 'm.sqlite'), '--json'];
    const first = onlyJson(await runFerry([...base, '--min-size', '50', '--max-size', '1K', '--max-age', '7d'], service.env())) as unknown as Summary;
    // Only new.txt: small.txt is too small, big.txt too big, old.txt too old.
    expect(first.counts).toMatchObject({ discovered: 1, uploaded: 1, failed: 0 });
    expect((await client.documents.list(project).all()).map((d) => d.name)).toEqual(['new.txt']);
    const rest = onlyJson(await runFerry(base, service.env())) as unknown as Summary;
    expect(rest.counts).toMatchObject({ discovered: 4, uploaded: 3, unchanged: 1 });
    // Limited again: what they leave out is not taken for files gone from the source.
    const again = onlyJson(await runFerry([...base, '--max-size', '1K'], service.env())) as unknown as Summary;
    expect(again.counts).toMatchObject({ discovered: 3, uploaded: 0 });
    expect(again.deletedLocally.count).toBe(0);
  });

  it('pull takes the same limits, and refuses limits that leave nothing', async () => {
    const client = service.client();
    const project = (await client.projects.create({ name: 'filters pull', description: '' })).objectIdentifier;
    expect(onlyJson(await runFerry(['mirror', join(dir, 'src'), '--project', project, '--state', join(dir, 'p-m.sqlite'), '--json'], service.env()))).toMatchObject({ status: 'succeeded' });
    const out = join(dir, 'out');
    const pulled = onlyJson(await runFerry(['pull', project, out, '--min-size', '1K', '--state', join(dir, 'p.sqlite'), '--json'], service.env())) as unknown as Summary;
    expect(pulled.counts).toMatchObject({ discovered: 1, downloaded: 1 });
    expect(await readdir(out)).toEqual(['big.txt']);
    const none = await runFerry(['pull', project, out, '--min-size', '2K', '--max-size', '1K'], service.env());
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no file would be left');
  });
});

const TREE: Record<string, string> = {
  'a.pdf': 'a pdf',
  'a.txt': 'a text',
  '.hidden.pdf': 'hidden',
  'docs/b.pdf': 'b pdf',
  'docs/b.txt': 'b text',
  'docs/deep/c.pdf': 'c pdf',
  'drafts/d.pdf': 'd pdf',
  'drafts/sub/e.pdf': 'e pdf',
};

/** Every file under `root`, relative, sorted. */
async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(root.length + 1)).sort();
}

describe('one pattern syntax for a folder, a zip and a project', () => {
  const cases: [string, string[], string[]][] = [
    ['--include and --exclude', ['--include', '**/*.pdf', '--exclude', 'drafts', '--exclude', '.*'], ['a.pdf', 'docs/b.pdf', 'docs/deep/c.pdf']],
    ['--include of subtrees', ['--include', 'docs/**', '--include', 'drafts/sub/*'], ['docs/b.pdf', 'docs/b.txt', 'docs/deep/c.pdf', 'drafts/sub/e.pdf']],
    ['--filter-from', ['--filter-from', 'RULES'], ['.hidden.pdf', 'a.pdf', 'docs/b.pdf', 'docs/deep/c.pdf', 'drafts/sub/e.pdf']],
  ];
  for (const [name, flags, expected] of cases) {
    it(`${name}: mirror of the folder, mirror of the zip and pull of the whole project pick the same paths`, async () => {
      const root = await mkdtemp(join(tmpdir(), 'ferry-patterns-'));
      await writeTree(join(root, 'src'), TREE);
      await writeFile(join(root, 'src.zip'), await zipOf(Object.entries(TREE).map(([n, data]) => ({ name: n, data }))));
      await writeFile(join(root, 'rules.txt'), '# the drafts of sub only, no text files\n+ drafts/sub/**\n- drafts\n- **/*.txt\n');
      const args = flags.map((f) => (f === 'RULES' ? join(root, 'rules.txt') : f));
      const client = service.client();
      const whole = (await client.projects.create({ name: `patterns whole ${name}`, description: '' })).objectIdentifier;
      const env = service.env();
      // The whole tree into one project, for the pull.
      expect(onlyJson(await runFerry(['mirror', join(root, 'src'), '--project', whole, '--state', join(root, 'w.sqlite'), '--json'], env))).toMatchObject({ counts: { uploaded: 8 } });
      const picked: Record<string, string[]> = {};
      for (const [what, source] of [['folder', join(root, 'src')], ['zip', join(root, 'src.zip')]] as const) {
        const project = (await client.projects.create({ name: `patterns ${what} ${name}`, description: '' })).objectIdentifier;
        const r = onlyJson(await runFerry(['mirror', source, '--project', project, ...args, '--state', join(root, `${what}.sqlite`), '--json'], env)) as { counts: { uploaded: number } };
        expect(r.counts.uploaded, what).toBe(expected.length);
        picked[what] = (await remoteFiles(client, project)).map((d) => (d.path ?? '').slice(1)).sort();
        // check, given the same patterns, finds what the mirror carried and nothing else; without
        // them, what the patterns left out is missing on the service.
        expect(onlyJson(await runFerry(['check', source, '--project', project, ...args, '--json'], env)), what).toMatchObject({ status: 'matching', matching: expected.length });
        expect(onlyJson(await runFerry(['check', source, '--project', project, '--json'], env)), what).toMatchObject({ status: 'different', counts: { missingOnTheService: 8 - expected.length } });
      }
      const out = join(root, 'pulled');
      const pulled = onlyJson(await runFerry(['pull', whole, out, ...args, '--state', join(root, 'p.sqlite'), '--json'], env)) as { counts: { downloaded: number } };
      expect(pulled.counts.downloaded).toBe(expected.length);
      picked.pull = await filesUnder(out);
      expect(picked).toEqual({ folder: [...expected].sort(), zip: [...expected].sort(), pull: [...expected].sort() });
    });
  }

  it('hostile names are judged by the patterns like any other, in a folder, a zip and a pull: none left out in silence', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ferry-patterns-hostile-'));
    // Carried: separators in a folder's and a file's name, a backslash, brackets, %22, a byte-order
    // mark. Refused by the name rule (a failed item, said out loud): a newline in a folder's name.
    const carried = ['d\u2028x/f.txt', 'x/\u2029/y.txt', 'a\\b.txt', '[x]/y.txt', '%22.txt', '\ufeffbom.txt'];
    const tree: Record<string, string> = Object.fromEntries([...carried, 'n\nl/f.txt', 'left/out.pdf'].map((k, i) => [k, `content ${i}`]));
    await writeTree(join(root, 'src'), tree);
    // archiver writes `\\` as `/`: the backslash is patched into the zip (made on Unix, so a name's).
    const zip = await zipOf(Object.entries(tree).map(([n, data]) => ({ name: n.replace('\\', '_'), data })));
    await writeFile(join(root, 'src.zip'), patchName(zip, 'a_b.txt', 'a\\b.txt'));
    const client = service.client();
    const env = service.env();
    for (const [what, source] of [['folder', join(root, 'src')], ['zip', join(root, 'src.zip')]] as const) {
      const project = (await client.projects.create({ name: `patterns hostile ${what}`, description: '' })).objectIdentifier;
      const r = onlyJson(await runFerry(['mirror', source, '--project', project, '--include', '**/*.txt', '--state', join(root, `${what}.sqlite`), '--json'], env)) as { counts: Record<string, number>; errors: { key: string; error: string }[] };
      expect(r.counts, what).toMatchObject({ uploaded: carried.length, failed: 1 });
      expect(r.errors.map((e) => e.key), what).toEqual(['n\nl/f.txt']);
      expect((await remoteFiles(client, project)).map((d) => (d.path ?? '').slice(1)).sort(), what).toEqual([...carried].sort());
      if (what === 'folder') {
        const out = join(root, 'pulled');
        const pulled = onlyJson(await runFerry(['pull', project, out, '--include', '**/*.txt', '--exclude', '[[]x]', '--state', join(root, 'p.sqlite'), '--json'], env)) as { counts: { downloaded: number } };
        expect(pulled.counts.downloaded).toBe(carried.length - 1);
        expect(await filesUnder(out)).toEqual(carried.filter((k) => !k.startsWith('[')).sort());
      }
    }
  });

  it('refuses --filter-from beside --include, and a file with a line that is not a rule (exit 2, nothing sent)', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ferry-patterns-bad-'));
    await writeTree(join(root, 'src'), { 'x.txt': 'x' });
    await writeFile(join(root, 'bad.txt'), '+ *.pdf\ntake the rest\n');
    const project = (await service.client().projects.create({ name: 'patterns refused', description: '' })).objectIdentifier;
    const both = await runFerry(['mirror', join(root, 'src'), '--project', project, '--filter-from', join(root, 'bad.txt'), '--include', '*.pdf'], service.env());
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--filter-from cannot be given with --include or --exclude');
    const bad = await runFerry(['pull', project, join(root, 'out'), '--filter-from', join(root, 'bad.txt')], service.env());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('line 2: "take the rest" is not a rule');
    const missing = await runFerry(['mirror', join(root, 'src'), '--project', project, '--filter-from', join(root, 'nope.txt')], service.env());
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`--filter-from ${join(root, 'nope.txt')} cannot be read: ENOENT`);
    expect(await remoteFiles(service.client(), project)).toEqual([]);
  });

  it('--bwlimit: mirror and pull carry every byte through the budget; a rate of 0 is refused', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ferry-bwlimit-'));
    const tree: Record<string, string> = {};
    for (let i = 0; i < 12; i++) tree[`f/${i}.bin`] = `${i}`.repeat(20_000 + i);
    await writeTree(join(root, 'src'), tree);
    const project = (await service.client().projects.create({ name: 'bwlimit', description: '' })).objectIdentifier;
    const env = service.env();
    const up = onlyJson(await runFerry(['mirror', join(root, 'src'), '--project', project, '--bwlimit', '50M', '--state', join(root, 'm.sqlite'), '--json'], env)) as { counts: { uploaded: number }; bytes: number };
    expect(up.counts.uploaded).toBe(12);
    const out = join(root, 'out');
    const down = onlyJson(await runFerry(['pull', project, out, '--bwlimit', '50M', '--state', join(root, 'p.sqlite'), '--json'], env)) as { counts: { downloaded: number }; bytes: number };
    expect(down.counts.downloaded).toBe(12);
    expect(down.bytes).toBe(up.bytes);
    for (const [key, content] of Object.entries(tree)) expect(await readFile(join(out, key), 'utf8'), key).toBe(content);
    const zero = await runFerry(['mirror', join(root, 'src'), '--project', project, '--bwlimit', '0'], env);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain('--bwlimit "0" is not a rate above 0');
  });

  it('a job file takes the same: filterFrom (beside the file), the size and age limits, bwlimit; a wrong value is named', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ferry-patterns-job-'));
    await writeTree(join(root, 'src'), TREE);
    await writeFile(join(root, 'rules.txt'), '+ drafts/sub/**\n- drafts\n- **/*.txt\n');
    const client = service.client();
    const project = (await client.projects.create({ name: 'patterns job file', description: '' })).objectIdentifier;
    const job = join(root, 'job.yaml');
    await writeFile(job, `job: mirror\nsource: src\nproject: ${project}\nfilterFrom: rules.txt\nminSize: 6\nmaxAge: 7d\nbwlimit: 10M\nstate: s.sqlite\n`);
    const r = onlyJson(await runFerry(['run', job, '--json'], service.env())) as { counts: { uploaded: number } };
    // Of the five the rules take, only the hidden file holds 6 bytes or more; the others hold 5.
    expect((await remoteFiles(client, project)).map((d) => (d.path ?? '').slice(1)).sort()).toEqual(['.hidden.pdf']);
    expect(r.counts.uploaded).toBe(1);
    await writeFile(job, `job: mirror\nsource: src\nproject: ${project}\nbwlimit: fast\n`);
    const bad = await runFerry(['run', job], service.env());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bwlimit.*must be a rate above 0, or a timetable like "08:00,512k 19:00,off"/);
    await writeFile(job, `job: mirror\nsource: src\nproject: ${project}\nfilterFrom: gone.txt\n`);
    const missing = await runFerry(['run', job], service.env());
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`job file ${job}: filterFrom gone.txt cannot be read: ENOENT`);
  });

  it('an upload declares the batch it creates with the files its patterns and limits take', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ferry-patterns-upload-'));
    await writeTree(join(root, 'src'), TREE);
    await writeFile(join(root, 'rules.txt'), '+ **/*.pdf\n- **\n');
    const client = service.client();
    const project = (await client.projects.create({ name: 'patterns upload', description: '' })).objectIdentifier;
    const playbook = (await client.playbooks.create({ name: 'patterns upload', isPrivate: false, organizationWide: true })).objectIdentifier;
    const r = onlyJson(await runFerry(['upload', join(root, 'src'), '--project', project, '--playbook', playbook, '--filter-from', join(root, 'rules.txt'), '--min-size', '6', '--no-wait', '--state', join(root, 's.sqlite'), '--json'], service.env())) as { batches: { uploadIdentifier: string; counts: { uploaded: number } }[] };
    // Of the six PDFs only the hidden one holds 6 bytes or more.
    expect(r.batches[0]!.counts.uploaded).toBe(1);
    const batch = await client.documentUploads.details(playbook, r.batches[0]!.uploadIdentifier);
    expect(batch.fileCount).toBe(1);
  });

  it('a path the patterns now leave out is not taken for one gone from the source, by mirror or by pull', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ferry-patterns-narrowed-'));
    await writeTree(join(root, 'src'), TREE);
    const project = (await service.client().projects.create({ name: 'patterns narrowed', description: '' })).objectIdentifier;
    const env = service.env();
    const mirrorArgs = ['mirror', join(root, 'src'), '--project', project, '--state', join(root, 'm.sqlite'), '--json'];
    expect(onlyJson(await runFerry(mirrorArgs, env))).toMatchObject({ counts: { uploaded: 8 } });
    // Narrowed: the drafts are left out, not deleted locally; the dry run says the same.
    expect(onlyJson(await runFerry([...mirrorArgs, '--exclude', 'drafts', '--dry-run'], env))).toMatchObject({ counts: { deletedLocally: 0 } });
    expect(onlyJson(await runFerry([...mirrorArgs, '--exclude', 'drafts'], env))).toMatchObject({ counts: { discovered: 6 }, deletedLocally: { count: 0 } });
    const pullArgs = ['pull', project, join(root, 'out'), '--state', join(root, 'p.sqlite'), '--json'];
    expect(onlyJson(await runFerry(pullArgs, env))).toMatchObject({ counts: { downloaded: 8 } });
    await writeFile(join(root, 'rules.txt'), '- **/*.txt\n');
    expect(onlyJson(await runFerry([...pullArgs, '--filter-from', join(root, 'rules.txt')], env))).toMatchObject({ counts: { discovered: 6 }, deletedLocally: { count: 0 } });
  });
});

