// An empty metadata value and a missing key are one thing (issue 76, docs/cli.md "Manifests"): a
// document carrying `Department` = "" pulled with --manifest-out comes out as an empty cell, and a
// mirror back with that sheet, from a fresh store, uploads nothing, whether the sheet is the CSV,
// the workbook, JSON Lines written by hand, or the CSV as LibreOffice saves it again.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempDirs } from '../helpers/temp.js';
import { remoteFiles, useService, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

const tempDir = useTempDirs();
const service = useService();

/** LibreOffice reads the CSV as UTF-8 with `,` and saves it again as such into `outdir`. */
function resavedByLibreOffice(profile: string, file: string, outdir: string): void {
  const args = [`-env:UserInstallation=file://${profile}`, '--headless', '--norestore', '--infilter=Text - txt - csv (StarCalc):44,34,76,1'];
  execFileSync('soffice', [...args, '--convert-to', 'csv:Text - txt - csv (StarCalc):44,34,76', '--outdir', outdir, file], { stdio: 'pipe', timeout: 120_000 });
}

describe('an empty metadata value on the round trip', () => {
  it('pull --manifest-out, then a mirror back with the sheet from a fresh store, uploads nothing: CSV, xlsx, JSON Lines, LibreOffice', async () => {
    const dir = await tempDir('ferry-empty-');
    const env = service().env();
    const project = (await service().client().projects.create({ name: 'empty values', description: '' })).objectIdentifier;
    await writeTree(join(dir, 'src'), { 'a.txt': 'aaa', 'sub/b.txt': 'bbb' });
    const seeded = await runFerry(['mirror', join(dir, 'src'), '--project', project, '--metadata', 'Department=', '--metadata', 'Team=blue', '--state', join(dir, 'seed.sqlite'), '--json'], env);
    expect(seeded.code, seeded.stderr).toBe(0);
    const docs = await remoteFiles(service().client(), project);
    expect(docs).toHaveLength(2);
    for (const d of docs) expect(d.metadata).toEqual(expect.arrayContaining([expect.objectContaining({ key: 'Department', value: '' })]));

    const pulled = join(dir, 'pulled');
    for (const out of ['back.csv', 'back.xlsx']) {
      const r = await runFerry(['pull', project, pulled, '--manifest-out', join(dir, out), '--state', join(dir, `pull-${out}.sqlite`), '--json'], env);
      expect(r.code, r.stderr).toBe(0);
    }
    // The empty value is an empty cell.
    expect((await readFile(join(dir, 'back.csv'), 'utf8')).replace(/^\ufeff/, '').split('\r\n').filter(Boolean).sort()).toEqual(['a.txt,,blue', 'path,Department,Team', 'sub/b.txt,,blue']);
    // JSON Lines as a person writes it, the empty value given.
    await writeFile(join(dir, 'back.jsonl'), ['a.txt', 'sub/b.txt'].map((path) => JSON.stringify({ path, metadata: { Department: '', Team: 'blue' } })).join('\n'));
    const resaved = join(dir, 'libreoffice');
    resavedByLibreOffice(join(dir, 'lo-profile'), join(dir, 'back.csv'), resaved);

    for (const manifest of [join(dir, 'back.csv'), join(dir, 'back.xlsx'), join(dir, 'back.jsonl'), join(resaved, 'back.csv')]) {
      const r = await runFerry(['mirror', pulled, '--project', project, '--manifest', manifest, '--state', join(dir, `fresh-${manifest.replace(/\W/g, '-')}.sqlite`), '--json'], env);
      const summary = onlyJson(r);
      expect(summary, `${manifest}: ${r.stderr}`).toMatchObject({ status: 'succeeded', exitCode: 0, counts: { uploaded: 0, failed: 0 } });
    }
    expect(await remoteFiles(service().client(), project)).toHaveLength(2);
  });
});
