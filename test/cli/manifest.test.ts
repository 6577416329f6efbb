// --manifest as users bring it: a sheet saved by Excel as "CSV UTF-8" (a byte-order mark, CRLF,
// quoted commas, doubled quotes and line breaks, a non-ASCII column), the same as semicolons (a
// German Excel), as JSON Lines, and over a zip; mirrored by `ferry` as a child process into the
// emulator, then read back document by document through the API.
import { describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { remoteFiles, useService, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { zipOf } from '../helpers/archives.js';
import type { Document } from '../../src/api/types.js';

const useEmulator = useService();

const FILES = { 'contracts/acme.pdf': 'acme contract', 'contracts/globex.txt': 'globex contract', 'misc/untagged.txt': 'no row for me' };

/** The sheet, as Excel writes "CSV UTF-8": BOM, CRLF, a quoted comma, doubled quotes, a line break in a cell, a non-ASCII column. */
const EXCEL = [
  '\ufeffpath,client,Matter №,notes,ocrStrategy',
  'contracts/acme.pdf,"ACME, Inc.",M-1,"He said ""sign here""",always',
  'contracts/globex.txt,Globex,M-2,"first line\r\nsecond line",',
  'contracts/ghost.pdf,Nobody,M-3,,never',
].join('\r\n') + '\r\n';

const EXPECTED: Record<string, Record<string, string>> = {
  'contracts/acme.pdf': { client: 'ACME, Inc.', 'Matter №': 'M-1', notes: 'He said "sign here"' },
  'contracts/globex.txt': { client: 'Globex', 'Matter №': 'M-2', notes: 'first line\r\nsecond line' },
  'misc/untagged.txt': {},
};

type Summary = { status: string; exitCode: number; counts: Record<string, number>; manifest?: { rows: number; unmatched: { count: number; paths: string[] } }; problems: { key: string; reason: string }[]; items?: { action: string; key: string; why?: string }[] };

/** Each document's own metadata (ferry's keys aside) and OCR strategy, by its path under `to`. */
async function carried(project: string, to: string): Promise<Record<string, { metadata: Record<string, string>; ocrStrategy: string | undefined }>> {
  const out: Record<string, { metadata: Record<string, string>; ocrStrategy: string | undefined }> = {};
  const newest = new Map<string, Document>();
  for (const doc of await remoteFiles(useEmulator().client(), project)) {
    const path = (doc.path ?? '').replace(/^\//, '');
    if (!path.startsWith(`${to}/`)) continue;
    const key = path.slice(to.length + 1);
    const seen = newest.get(key);
    if (!seen || (doc.dateAdded ?? '') > (seen.dateAdded ?? '')) newest.set(key, doc);
  }
  for (const [key, doc] of newest) {
    const metadata = Object.fromEntries((doc.metadata ?? []).filter((m) => m.key && !m.key.startsWith('ferry.')).map((m) => [m.key!, m.value ?? '']));
    out[key] = { metadata, ocrStrategy: doc.ocrStrategy ?? undefined };
  }
  return out;
}

async function workspace(label: string, manifest: string, name = 'manifest.csv') {
  const dir = await mkdtemp(join(tmpdir(), `ferry-manifest-${label}-`));
  await writeTree(join(dir, 'share'), FILES);
  await writeFile(join(dir, name), manifest);
  return { dir, src: join(dir, 'share'), manifest: join(dir, name), state: join(dir, 'state.sqlite') };
}

describe('--manifest: every document with its own metadata', () => {
  it("an Excel sheet: each document carries exactly its row and its row's OCR strategy; a file without a row none; the row without a file is named; a rerun uploads 0", async () => {
    const w = await workspace('excel', EXCEL);
    const project = useEmulator().project;
    const args = ['mirror', w.src, '--project', project, '--to', 'Excel', '--manifest', w.manifest, '--state', w.state];
    const r = await runFerry([...args, '--json'], useEmulator().env());
    expect(r.code, r.stderr).toBe(0);
    const summary = onlyJson(r) as Summary;
    expect(summary.counts).toMatchObject({ uploaded: 3, failed: 0 });
    expect(summary.manifest).toMatchObject({ rows: 3, unmatched: { count: 1, paths: ['contracts/ghost.pdf'] } });
    expect(summary.problems).toContainEqual({ key: '(manifest)', reason: expect.stringContaining('1 row of the manifest names no file of the source: "contracts/ghost.pdf"') });
    const docs = await carried(project, 'Excel');
    for (const [key, metadata] of Object.entries(EXPECTED)) expect(docs[key]?.metadata, key).toEqual(metadata);
    expect(docs['contracts/acme.pdf']!.ocrStrategy).toBe('always');

    const again = onlyJson(await runFerry([...args, '--json'], useEmulator().env())) as Summary;
    expect(again.counts).toMatchObject({ uploaded: 0, unchanged: 3 });
    // In text too: the row without a file is said.
    const text = await runFerry(args, useEmulator().env());
    expect(text.stdout).toContain('(manifest): warning: 1 row of the manifest names no file of the source: "contracts/ghost.pdf"');

    // One changed row: the dry run names that document alone, the run uploads it once, as a new version.
    await writeFile(w.manifest, EXCEL.replace('Globex,M-2', 'Globex Corp,M-2'));
    const plan = onlyJson(await runFerry([...args, '-n', '--json'], useEmulator().env())) as Summary & { counts: Record<string, number> };
    expect(plan.counts).toMatchObject({ new: 0, changed: 1, unchanged: 2 });
    // The keys that would change, with the value the document carries now (asked of the service) and the row's.
    expect(plan.items).toEqual([{ action: 'changed', key: 'contracts/globex.txt', size: FILES['contracts/globex.txt'].length, why: 'metadata', changes: [{ key: 'client', was: 'Globex', now: 'Globex Corp' }] }]);
    const planText = await runFerry([...args, '-n'], useEmulator().env());
    expect(planText.stdout).toContain(`upload, changed (metadata): contracts/globex.txt (${FILES['contracts/globex.txt'].length} B): client "Globex" -> "Globex Corp"`);
    const changed = onlyJson(await runFerry([...args, '--json'], useEmulator().env())) as Summary;
    expect(changed.counts).toMatchObject({ uploaded: 1, unchanged: 2 });
    expect((await carried(project, 'Excel'))['contracts/globex.txt']!.metadata.client).toBe('Globex Corp');

    // check names the document and the key that differ from the sheet.
    await writeFile(w.manifest, EXCEL.replace('M-1', 'M-100'));
    const check = onlyJson(await runFerry(['check', w.src, '--project', project, '--to', 'Excel', '--manifest', w.manifest, '--json'], useEmulator().env())) as { status: string; differences: { kind: string; path: string; key?: string; service?: string | null; manifest?: string | null }[] };
    expect(check.status).toBe('different');
    expect(check.differences.filter((d) => d.kind === 'metadata differs')).toEqual([
      expect.objectContaining({ path: 'contracts/acme.pdf', key: 'Matter №', service: 'M-1', manifest: 'M-100' }),
      expect.objectContaining({ path: 'contracts/globex.txt', key: 'client', service: 'Globex Corp', manifest: 'Globex' }),
    ]);
    // A version uploaded for its metadata alone is an older version, not a copy.
    expect(check.differences.filter((d) => d.kind === 'twice on the service')).toEqual([]);
  });

  it('a fresh store (no checkpoint): the sheet is compared with what the documents carry: 0 uploads, then exactly the changed row', async () => {
    const w = await workspace('cold', EXCEL);
    const project = useEmulator().project;
    const args = (state: string) => ['mirror', w.src, '--project', project, '--to', 'Cold', '--manifest', w.manifest, '--state', state, '--json'];
    expect((onlyJson(await runFerry(args(w.state), useEmulator().env())) as Summary).counts).toMatchObject({ uploaded: 3 });
    const fresh = onlyJson(await runFerry(args(join(w.dir, 'fresh.sqlite')), useEmulator().env())) as Summary;
    expect(fresh.counts).toMatchObject({ uploaded: 0, failed: 0 });
    await writeFile(w.manifest, EXCEL.replace('He said', 'She said'));
    const changed = onlyJson(await runFerry(args(join(w.dir, 'fresher.sqlite')), useEmulator().env())) as Summary;
    expect(changed.counts).toMatchObject({ uploaded: 1 });
    expect((await carried(project, 'Cold'))['contracts/acme.pdf']!.metadata.notes).toBe('She said "sign here"');
  });

  it('semicolons (a German Excel), JSON Lines and a zip source give the same documents', async () => {
    const project = useEmulator().project;
    const semicolon = EXCEL.replace(/,/g, ';').replace('"ACME; Inc."', '"ACME, Inc."');
    const jsonl = [
      JSON.stringify({ path: 'contracts/acme.pdf', metadata: EXPECTED['contracts/acme.pdf'], ocrStrategy: 'always' }),
      JSON.stringify({ path: 'contracts/globex.txt', metadata: EXPECTED['contracts/globex.txt'] }),
      JSON.stringify({ path: 'contracts/ghost.pdf', metadata: { client: 'Nobody' }, ocrStrategy: 'never' }),
    ].join('\n');
    const cases = [
      { label: 'semicolon', to: 'Semicolon', ...(await workspace('semicolon', semicolon)) },
      { label: 'jsonl', to: 'Jsonl', ...(await workspace('jsonl', jsonl, 'manifest.jsonl')) },
    ];
    const zipped = await workspace('zip', EXCEL);
    const zip = join(zipped.dir, 'share.zip');
    await writeFile(zip, await zipOf(Object.entries(FILES).map(([name, data]) => ({ name, data }))));
    cases.push({ label: 'zip', to: 'Zip', ...zipped, src: zip });
    for (const c of cases) {
      const r = await runFerry(['mirror', c.src, '--project', project, '--to', c.to, '--manifest', c.manifest, '--state', c.state, '--json'], useEmulator().env());
      expect(r.code, `${c.label}: ${r.stderr}`).toBe(0);
      expect((onlyJson(r) as Summary).manifest?.unmatched.paths, c.label).toEqual(['contracts/ghost.pdf']);
      const docs = await carried(project, c.to);
      for (const [key, metadata] of Object.entries(EXPECTED)) expect(docs[key]?.metadata, `${c.label}: ${key}`).toEqual(metadata);
      expect(docs['contracts/acme.pdf']!.ocrStrategy, c.label).toBe('always');
    }
  });

  it('pull --manifest-out, then mirror the pulled folder with it into another folder: the same metadata on every document', async () => {
    const w = await workspace('roundtrip', EXCEL);
    const project = useEmulator().project;
    expect((await runFerry(['mirror', w.src, '--project', project, '--to', 'Origin', '--manifest', w.manifest, '--metadata', 'batch=2019', '--state', w.state], useEmulator().env())).code).toBe(0);
    const out = join(w.dir, 'pulled.csv');
    const pulled = await runFerry(['pull', project, join(w.dir, 'pulled'), '--from', 'Origin', '--manifest-out', out, '--state', join(w.dir, 'pull.sqlite'), '--json'], useEmulator().env());
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(onlyJson(pulled)).toMatchObject({ manifest: { rows: 3, columns: ['Matter №', 'batch', 'client', 'notes'] } });
    const mirrored = await runFerry(['mirror', join(w.dir, 'pulled'), '--project', project, '--to', 'Copy', '--manifest', out, '--state', join(w.dir, 'copy.sqlite'), '--json'], useEmulator().env());
    expect(mirrored.code, mirrored.stderr).toBe(0);
    expect((onlyJson(mirrored) as Summary).manifest?.unmatched.count).toBe(0);
    const [origin, copy] = [await carried(project, 'Origin'), await carried(project, 'Copy')];
    expect(Object.keys(copy).sort()).toEqual(Object.keys(FILES).sort());
    for (const key of Object.keys(FILES)) expect(copy[key]!.metadata, key).toEqual(origin[key]!.metadata);
    expect(copy['misc/untagged.txt']!.metadata).toEqual({ batch: '2019' });
  });
});

describe('upload --manifest', () => {
  it("a playbook's batch: each document carries its row, and the batch holds every file", async () => {
    const w = await workspace('upload', EXCEL);
    const client = useEmulator().client();
    const project = (await client.projects.create({ name: 'manifest upload', description: '' })).objectIdentifier;
    const playbook = (await client.playbooks.create({ name: 'manifest upload', isPrivate: false, organizationWide: true })).objectIdentifier;
    const r = await runFerry(['upload', w.src, '--project', project, '--playbook', playbook, '--to', 'Batch', '--manifest', w.manifest, '--state', w.state, '--json'], useEmulator().env());
    // Exit 1: processing refuses the .pdf that holds no PDF (badFile), as it would without a manifest.
    expect(r.code, r.stderr).toBe(1);
    expect(onlyJson(r)).toMatchObject({ remainingFailures: { badFile: 1 }, batches: [expect.objectContaining({ counts: expect.objectContaining({ uploaded: 3, failed: 0 }), manifest: expect.objectContaining({ rows: 3 }) })] });
    const docs = await carried(project, 'Batch');
    for (const [key, metadata] of Object.entries(EXPECTED)) expect(docs[key]?.metadata, key).toEqual(metadata);
  });
});

describe('a manifest that cannot be used: exit 2 before anything is sent, naming the file and the line', () => {
  const cases: [string, string | Buffer, RegExp][] = [
    ['the same path twice', 'path,client\na.txt,A\nb.txt,B\na.txt,C\n', /line 4: "a\.txt" has a row already, on line 2/],
    ['a ferry. column', 'path,ferry.path\na.txt,x\n', /line 1 \(the header\): the column "ferry\.path": keys starting with "ferry\." are ferry's own/],
    ['an ocrStrategy the spec does not have', 'path,ocrStrategy\na.txt,sometimes\n', /line 2: ocrStrategy "sometimes" is not one the service has \(never, detect, always\)/],
    ['an unterminated quote', 'path,client\na.txt,"ACME\nb.txt,B\n', /line 2: a quote opened on this line is never closed/],
    ['no path column', 'file,client\na.txt,A\n', /line 1 \(the header\) has no "path" column/],
    ['a file that is not UTF-8 (Excel\'s plain CSV, cp1252)', Buffer.concat([Buffer.from('path,client\na.txt,A\nb.txt,Soci'), Buffer.from([0xe9]), Buffer.from('t\xe9\n', 'latin1')]), /line 3: not UTF-8 .*save it as "CSV UTF-8/],
  ];
  it.each(cases)('%s', async (_label, text, message) => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-manifest-bad-'));
    await writeTree(join(dir, 'share'), { 'a.txt': 'a', 'b.txt': 'b' });
    await writeFile(join(dir, 'bad.csv'), text);
    const client = useEmulator().client();
    const project = (await client.projects.create({ name: `bad manifest ${dir}`, description: '' })).objectIdentifier;
    const r = await runFerry(['mirror', join(dir, 'share'), '--project', project, '--manifest', join(dir, 'bad.csv'), '--state', join(dir, 's.sqlite'), '--json'], useEmulator().env());
    expect(r.code, r.stderr).toBe(2);
    const error = (onlyJson(r) as { error: string }).error;
    expect(error).toContain(`--manifest ${join(dir, 'bad.csv')}`);
    expect(error).toMatch(message);
    // Nothing created: no document, no folder, no lease record.
    expect(await remoteFiles(client, project)).toEqual([]);
    expect((await client.documents.list(project, { flattenList: true }).page(1, 1)).totalCount ?? 0).toBe(0);
  });

  it('a manifest on pull or migrate is told what it means there', async () => {
    const pull = await runFerry(['pull', useEmulator().project, '/tmp/unused', '--manifest', 'x.csv'], useEmulator().env());
    expect(pull.code).toBe(2);
    expect(pull.stderr).toContain('--manifest means nothing to pull');
    expect(pull.stderr).toContain('--manifest-out FILE');
    const migrate = await runFerry(['migrate', '--from', 'a', '--to', 'b', '--projects', useEmulator().project, '--manifest', 'x.csv'], useEmulator().env());
    expect(migrate.code).toBe(2);
    expect(migrate.stderr).toContain('--manifest means nothing to a migration');
  });
});
