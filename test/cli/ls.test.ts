// `ferry ls` against the emulator over loopback, as a user runs it: the projects, a project's root,
// a folder by path, everything under it with -R, one JSON object under --json, names escaped in
// text and exact in JSON, and a clear error for a path that is not there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Readable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { visible } from '../../src/text.js';

let service: Service;
let env: Record<string, string>;
let project: string;
// Uploaded as is, shown escaped: a backslash, a percent escape and a line separator.
const HOSTILE = 'back\\slash %22 \u2028.txt';

beforeAll(async () => {
  service = await startService();
  env = service.env(0);
  const client = service.client();
  project = (await client.projects.create({ name: 'ls here', description: 'ls' })).objectIdentifier;
  const root = await mkdtemp(join(tmpdir(), 'ferry-ls-'));
  await writeTree(root, { 'top.txt': 'top', 'a/one.txt': 'one!', 'a/b/two.txt': 'two two', [`a/${HOSTILE}`]: 'x' });
  const mirrored = await runFerry(['mirror', root, '--project', project, '--state', join(root, '..', 'ls-state.sqlite'), '--json'], env);
  expect(onlyJson(mirrored)).toMatchObject({ status: 'succeeded' });
});
afterAll(() => service.close());

type Item = { path: string; name: string; isDirectory: boolean; size: number | null; id: string };

async function lsJson(...args: string[]): Promise<{ items: Item[]; count: number; exitCode: number; status: string; error?: string }> {
  const r = await runFerry(['ls', ...args, '--json'], env);
  return onlyJson(r) as never;
}

describe('ferry ls', () => {
  it('lists the projects, the new one by id and name', async () => {
    const text = await runFerry(['ls'], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^${project}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d  ls here$`, 'm'));
    const json = (await lsJson()) as unknown as { items: { id: string; name: string }[]; count: number; command: string };
    expect(json).toMatchObject({ command: 'ls', status: 'succeeded', exitCode: 0 });
    expect(json.items.find((p) => p.id === project)?.name).toBe('ls here');
    expect(json.count).toBe(json.items.length);
  });

  it('lists a folder by path, one level, folders marked', async () => {
    const root = await lsJson(project);
    expect(root.items.map((i) => [i.path, i.isDirectory, i.size]).sort()).toEqual([['/a', true, null], ['/top.txt', false, 3]]);
    const a = await lsJson(`${project}/a`);
    expect(a.items.map((i) => i.path).sort()).toEqual(['/a/b', `/a/${HOSTILE}`, '/a/one.txt']);
    const text = await runFerry(['ls', `${project}/a`], env);
    expect(text.code).toBe(0);
    // A name with a line separator is one line in text, escaped; a folder ends in /.
    expect(text.stdout.split('\n').filter(Boolean)).toHaveLength(3);
    expect(text.stdout).not.toContain('\u2028');
    expect(text.stdout).toContain(visible(`/a/${HOSTILE}`));
    expect(text.stdout).toMatch(/^\s+-  .{19}  \/a\/b\/$/m);
    expect(text.stdout).toMatch(/^\s+4  .{19}  \/a\/one\.txt$/m);
  });

  it('lists everything under a folder with -R, with paths and sizes', async () => {
    const all = await lsJson(project, '-R');
    const files = all.items.filter((i) => !i.isDirectory).map((i) => [i.path, i.size]).sort();
    expect(files).toEqual([['/a/b/two.txt', 7], [`/a/${HOSTILE}`, 1], ['/a/one.txt', 4], ['/top.txt', 3]]);
    // In order, unsorted by the test: by path segment by segment, each folder just before its contents.
    expect(all.items.map((i) => i.path)).toEqual(['/a', '/a/b', '/a/b/two.txt', `/a/${HOSTILE}`, '/a/one.txt', '/top.txt']);
    const text = await runFerry(['ls', project, '-R'], env);
    expect(text.stdout.split('\n').filter(Boolean).map((l) => l.slice(35))).toEqual(['/a/', '/a/b/', '/a/b/two.txt', visible(`/a/${HOSTILE}`), '/a/one.txt', '/top.txt']);
    const underB = await lsJson(`${project}/a/b`, '--recursive');
    expect(underB.items.map((i) => i.path)).toEqual(['/a/b/two.txt']);
  });

  it('names users really have, through -R and its sort: one escaped line each, in byte order, exact in JSON', async () => {
    const client = service.client();
    const target = (await client.projects.create({ name: 'ls hostile', description: 'ls' })).objectIdentifier;
    // What a mirror carries: a byte-order mark, a percent escape and a backslash, 255 bytes of UTF-8, a paragraph separator.
    const carried = ['\ufeffbom.txt', '100%25 \\ done.txt', `${'é'.repeat(126)}.tx`, 'z \u2029 folder/inside.txt'];
    expect(Buffer.byteLength(carried[2]!)).toBe(255);
    const root = await mkdtemp(join(tmpdir(), 'ferry-ls-hostile-'));
    await writeTree(root, Object.fromEntries(carried.map((n) => [n, n])));
    const mirrored = onlyJson(await runFerry(['mirror', root, '--project', target, '--state', join(root, '..', 'ls-hostile.sqlite'), '--json'], env));
    expect(mirrored).toMatchObject({ status: 'succeeded', counts: { uploaded: carried.length } });
    // What a mirror refuses (control characters), put there by another client: the service holds it all the same.
    const sent = ['esc \u001b[31mred\u001b[0m.txt', 'tab\there.txt', 'bell\u0007.txt'];
    for (const filename of sent) await client.documents.upload(target, { open: () => Readable.from([Buffer.from('x')]), size: 1, filename, contentType: 'text/plain' }, { documentUploadIdentifier: randomUUID() });
    const names = [...carried, ...sent];

    const paths = names.map((n) => `/${n}`).concat('/z \u2029 folder');
    // Segment by segment in UTF-8 byte order, each folder just before its contents.
    const bytes = (p: string) => Buffer.from(p.split('/').filter(Boolean).join('\0'));
    const expected = [...paths].sort((x, y) => Buffer.compare(bytes(x), bytes(y)));
    const json = await lsJson(target, '-R');
    expect(json.items.map((i) => i.path)).toEqual(expected);

    const text = await runFerry(['ls', target, '-R'], env);
    expect(text.code).toBe(0);
    const lines = text.stdout.split('\n').filter(Boolean);
    expect(lines).toHaveLength(expected.length);
    // A document processing refused (the `.tx` of 255 bytes: no type the service indexes) is marked with its reason.
    const refusedMark = (p: string) => {
      const reason = (json.items.find((i) => i.path === p) as { refused?: string | null }).refused;
      return reason ? `  [refused: ${reason}]` : '';
    };
    expect(lines.map((l) => l.slice(35))).toEqual(expected.map((p) => visible(p) + (json.items.find((i) => i.path === p)!.isDirectory ? '/' : '') + refusedMark(p)));
    // Nothing a terminal would act on reaches it.
    expect(text.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u2028\u2029\ufeff]/);
  });

  it('names the document a path points at', async () => {
    const one = await lsJson(`${project}/a/one.txt`);
    expect(one.items).toHaveLength(1);
    expect(one.items[0]).toMatchObject({ path: '/a/one.txt', size: 4, isDirectory: false });
  });

  it('says what is not there, and refuses what is not a project id', async () => {
    const missing = await runFerry(['ls', `${project}/a/nope`], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no folder or document /a/nope');
    const json = await lsJson(`${project}/top.txt/deeper`);
    expect(json).toMatchObject({ status: 'failed', exitCode: 1, count: 0 });
    expect(json.error).toContain('is a document, not a folder');
    const bad = await runFerry(['ls', 'not-a-project'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('PROJECT');
    const unknown = await runFerry(['ls', '00000000-0000-4000-8000-000000000000'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no project 00000000-0000-4000-8000-000000000000');
  });
});

describe('ferry playbooks list', () => {
  it('lists the organization\'s playbooks, and those a search finds', async () => {
    const client = service.client();
    const made = await client.playbooks.create({ name: 'Supplier \\ review', description: 'ls', isPrivate: false, organizationWide: true });
    const json = onlyJson(await runFerry(['playbooks', 'list', '--json'], env)) as { command: string; items: { id: string; name: string }[]; count: number; exitCode: number };
    expect(json).toMatchObject({ command: 'playbooks list', exitCode: 0 });
    expect(json.items.find((p) => p.id === made.objectIdentifier)?.name).toBe('Supplier \\ review');
    expect(json.count).toBe(json.items.length);
    const text = await runFerry(['playbooks', 'list'], env);
    expect(text.code).toBe(0);
    // Shown escaped: the backslash doubled.
    expect(text.stdout).toContain(`${made.objectIdentifier}  `);
    expect(text.stdout).toContain('Supplier \\\\ review');
    const none = await runFerry(['playbooks', 'list', '--search', 'no playbook is called this'], env);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain('nothing found');
  });
});

describe('ferry ls by name, with metadata', () => {
  it('takes a project by its name (one holding a slash too), and shows what each document carries', async () => {
    const client = service.client();
    const named = (await client.projects.create({ name: 'Kunden/2026 Akten', description: '' })).objectIdentifier;
    const root = await mkdtemp(join(tmpdir(), 'ferry-ls-named-'));
    await writeTree(join(root, 'src'), { 'akte/vertrag.pdf': 'vertrag' });
    await writeTree(root, { 'sheet.csv': 'path,Kunde,Notiz\nakte/vertrag.pdf,Müller GmbH,"zweite\nZeile"\n' });
    const mirrored = await runFerry(['mirror', join(root, 'src'), '--project', named, '--manifest', join(root, 'sheet.csv'), '--state', join(root, 's.sqlite')], env);
    expect(mirrored.code, mirrored.stderr).toBe(0);

    const byName = await lsJson('Kunden/2026 Akten/akte');
    expect(byName.exitCode).toBe(0);
    expect(byName.items).toEqual([expect.objectContaining({ path: '/akte/vertrag.pdf', metadata: expect.objectContaining({ Kunde: 'Müller GmbH', Notiz: 'zweite\nZeile' }) })]);
    const byId = await lsJson(`${named}/akte`);
    expect(byId.items.map((i) => i.id)).toEqual(byName.items.map((i) => i.id));

    const long = await runFerry(['ls', 'Kunden/2026 Akten', '-R', '--long'], env);
    expect(long.code, long.stderr).toBe(0);
    expect(long.stdout).toMatch(/\/akte\/vertrag\.pdf .*Kunde=Müller GmbH; Notiz=zweite\\nZeile\n/);
    expect(long.stdout).not.toMatch(/ferry\./);

    const missing = await runFerry(['ls', 'kunden/2026 akten'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no project this client sees is named "kunden".*ferry ls/);
  });
});
