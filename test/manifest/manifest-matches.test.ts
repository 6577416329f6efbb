// A sheet that matches nothing stops before the first upload: every version the service keeps is
// for good, and documents sent without their metadata would stay so. Paths written with the
// mirrored folder's own name as a prefix are exit 2 naming the fix, nothing sent; with
// --manifest-partial the run goes on knowingly. Paths written with backslashes, as Windows users
// copy them, are read with / and said so.
import { describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { remoteFiles, useService, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

const useEmulator = useService();

const FILES = { 'Müller GmbH/Vertrag.pdf': 'vertrag', 'Müller GmbH/Angebot.txt': 'angebot', 'Intern/Notiz.txt': 'notiz' };

async function setUp(label: string, sheet: string) {
  const dir = await mkdtemp(join(tmpdir(), `ferry-matches-${label}-`));
  const src = join(dir, 'tree');
  await writeTree(src, FILES);
  await writeFile(join(dir, 'sheet.csv'), sheet);
  const client = useEmulator().client();
  const project = (await client.projects.create({ name: `matches ${label}`, description: '' })).objectIdentifier;
  return { dir, src, sheet: join(dir, 'sheet.csv'), client, project };
}

const rows = (path: (key: string) => string) => `\ufeffpath,Kunde\r\n${Object.keys(FILES).map((k, i) => `${path(k)},Kunde ${i}`).join('\r\n')}\r\n`;

describe('a manifest whose rows name no file of the folder', () => {
  it("the folder's own name as a prefix: exit 2 naming the fix, nothing sent; --manifest-partial goes on", async () => {
    const w = await setUp('prefix', rows((k) => `tree/${k}`));
    const before = (await remoteFiles(w.client, w.project)).length;
    const r = await runFerry(['mirror', w.src, '--project', w.project, '--manifest', w.sheet, '--state', join(w.dir, 's.sqlite'), '--json'], useEmulator().env());
    expect(r.code, r.stderr).toBe(2);
    const error = (onlyJson(r) as { error: string }).error;
    expect(error).toMatch(/none of its 3 rows names a file/);
    expect(error).toMatch(/Every row starts with "tree\/".*remove that prefix/);
    expect(error).toMatch(/--manifest-partial/);
    expect(await remoteFiles(w.client, w.project)).toHaveLength(before);

    const dry = await runFerry(['mirror', w.src, '--project', w.project, '--manifest', w.sheet, '--dry-run'], useEmulator().env());
    expect(dry.code).toBe(2);

    const partial = await runFerry(['mirror', w.src, '--project', w.project, '--manifest', w.sheet, '--manifest-partial', '--state', join(w.dir, 's.sqlite'), '--json'], useEmulator().env());
    expect(partial.code, partial.stderr).toBe(0);
    expect(onlyJson(partial)).toMatchObject({ counts: expect.objectContaining({ uploaded: 3 }), manifest: { unmatched: { count: 3 } } });
  });

  it('backslashes between folders, as Windows users copy paths: read as /, every document with its row, said', async () => {
    const w = await setUp('backslash', rows((k) => k.replace(/\//g, '\\')));
    const r = await runFerry(['mirror', w.src, '--project', w.project, '--manifest', w.sheet, '--state', join(w.dir, 's.sqlite'), '--json'], useEmulator().env());
    expect(r.code, r.stderr).toBe(0);
    const summary = onlyJson(r) as { manifest: { unmatched: { count: number }; separatorsRead: number }; problems: { key: string; reason: string }[] };
    expect(summary.manifest).toMatchObject({ unmatched: { count: 0 }, separatorsRead: 3 });
    expect(summary.problems).toContainEqual({ key: '(manifest)', reason: expect.stringMatching(/3 rows of the manifest use \\ between folders .*read as \//) });
    const docs = await remoteFiles(w.client, w.project);
    const kunde = Object.fromEntries(docs.map((d) => [d.path!.replace(/^\//, ''), d.metadata?.find((m) => m.key === 'Kunde')?.value]));
    expect(kunde).toEqual({ 'Müller GmbH/Vertrag.pdf': 'Kunde 0', 'Müller GmbH/Angebot.txt': 'Kunde 1', 'Intern/Notiz.txt': 'Kunde 2' });
  });
});
