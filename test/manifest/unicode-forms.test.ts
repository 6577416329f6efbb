// A Mac's tree with its own sheet (issue 76): files named in NFD, as macOS writes `café.txt`, with
// a CSV naming them byte for byte (NFD) or as Windows and Excel write them (NFC): every row matches
// its file, in the pre-flight and the run, and every document carries its row. A row that names
// two files, one name in two forms, is exit 2 naming both. `ferry mirror` runs as its own process.
import { describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempDirs } from '../helpers/temp.js';
import { remoteFiles, useService, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

const tempDir = useTempDirs();
const service = useService();

const NAMES = ['café.txt', 'Straße/Übersicht.txt', 'Ångström/ñandú.txt'];
const nfd = (s: string) => s.normalize('NFD');
const nfc = (s: string) => s.normalize('NFC');

describe('a tree named in NFD, with a sheet in either form', () => {
  for (const [form, write] of [['NFD', nfd], ['NFC', nfc]] as const) {
    it(`a sheet in ${form}: the pre-flight passes and every document carries its row`, async () => {
      const dir = await tempDir('ferry-nfd-');
      const src = join(dir, 'src');
      await writeTree(src, Object.fromEntries(NAMES.map((n) => [nfd(n), `content of ${n}`])));
      const sheet = join(dir, 'rows.csv');
      await writeFile(sheet, `path,Department\r\n${NAMES.map((n, i) => `${write(n)},D${i}`).join('\r\n')}\r\n`);
      const project = (await service().client().projects.create({ name: `nfd ${form}`, description: '' })).objectIdentifier;
      const r = await runFerry(['mirror', src, '--project', project, '--manifest', sheet, '--state', join(dir, 'state.sqlite'), '--json'], service().env());
      const summary = onlyJson(r);
      expect(summary, r.stderr).toMatchObject({ status: 'succeeded', exitCode: 0, counts: { uploaded: 3, failed: 0 }, manifest: { unmatched: { count: 0 }, withoutRow: { count: 0 } } });
      const docs = await remoteFiles(service().client(), project);
      const department = Object.fromEntries(docs.map((d) => [nfc(d.path!), d.metadata?.find((m) => m.key === 'Department')?.value]));
      expect(department).toEqual(Object.fromEntries(NAMES.map((n, i) => [`/${nfc(n)}`, `D${i}`])));
    });
  }

  it('a row that names two files, one name in two forms, is exit 2 naming both, before anything is sent', async () => {
    const dir = await tempDir('ferry-nfd-');
    const src = join(dir, 'src');
    await writeTree(src, { [nfc('café.txt')]: 'composed', [nfd('café.txt')]: 'decomposed', 'plain.txt': 'plain' });
    const sheet = join(dir, 'rows.csv');
    await writeFile(sheet, `path,Department\r\n${nfc('café.txt')},Sales\r\nplain.txt,Ops\r\n`);
    const project = (await service().client().projects.create({ name: 'nfd twice', description: '' })).objectIdentifier;
    const r = await runFerry(['mirror', src, '--project', project, '--manifest', sheet, '--state', join(dir, 'state.sqlite'), '--json'], service().env());
    expect(r.code, r.stdout + r.stderr).toBe(2);
    const said = JSON.stringify(onlyJson(r));
    expect(said).toContain('the same name in two Unicode forms');
    expect(said).toContain('NFC');
    expect(said).toContain('NFD');
    expect(await remoteFiles(service().client(), project)).toEqual([]);
  });
});
