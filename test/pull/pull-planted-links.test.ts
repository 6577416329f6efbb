// Nothing a pull writes goes through a link it did not make (issue 76): a symbolic link or a hard
// link planted where ferry writes its record of names, a download it continues, a backup or a
// manifest is refused by path or replaced, never followed; the file outside stays byte-identical.
// `ferry pull` runs as its own process against the emulator.
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { link, lstat, mkdir, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { useTempDirs } from '../helpers/temp.js';
import { mirroredProject, useService } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { keptPartialPath } from '../helpers/kept-partial.js';
import { NAMES_FILE } from '../../src/backends/names-record.js';

const tempDir = useTempDirs();
const service = useService();
const MiB = 1024 * 1024;
const OUTSIDE = 'outside: keep me byte for byte\n';

/** A folder with a project pulled into it once (under Windows' rules, so that a record of names is written), and a file outside. */
async function pulledOnce(files: Record<string, string | Buffer>, name: string) {
  const base = await tempDir('ferry-links-');
  const project = await mirroredProject(service().client(), join(base, 'src'), files, name);
  const out = join(base, 'out');
  const state = join(base, 'state.sqlite');
  const outside = join(base, 'outside.txt');
  await writeFile(outside, OUTSIDE);
  const pull = (...extra: string[]) => runFerry(['pull', project, out, '--state', state, '--local-names', 'windows', '--json', ...extra], service().env());
  return { base, project, out, outside, pull };
}

describe('a link planted where a pull writes', () => {
  for (const kind of ['symbolic', 'hard'] as const) {
    it(`at the record of names (a ${kind} link): the folder is refused by path, exit 2, the file outside unchanged`, async () => {
      const t = await pulledOnce({ 'what?.txt': 'mapped', 'plain.txt': 'plain' }, `links-record-${kind}`);
      expect((await t.pull()).code).toBe(0);
      const record = join(t.out, NAMES_FILE);
      expect((await readFile(record, 'utf8')).length).toBeGreaterThan(0);
      await rm(record);
      await (kind === 'symbolic' ? symlink(t.outside, record) : link(t.outside, record));
      // Something to write on this run: a pulled file deleted here.
      await rm(join(t.out, 'plain.txt'));
      const r = await t.pull();
      expect(r.code, r.stdout + r.stderr).toBe(2);
      expect(JSON.stringify(onlyJson(r))).toContain(`${NAMES_FILE} is a ${kind === 'symbolic' ? 'symbolic link' : 'hard link'}`);
      expect(await readFile(t.outside, 'utf8')).toBe(OUTSIDE);
    });
  }

  for (const kind of ['symbolic', 'hard'] as const) {
    it(`at a download to continue (a ${kind} link): the item fails naming it, exit 1, the file outside unchanged`, async () => {
      const t = await pulledOnce({ 'big.bin': randomBytes(17 * MiB) }, `links-partial-${kind}`);
      const path = await keptPartialPath(service(), t.project, t.out, 'big.bin');
      const name = basename(path);
      await (kind === 'symbolic' ? symlink(t.outside, path) : link(t.outside, path));
      const r = await t.pull();
      expect(r.code, r.stdout + r.stderr).toBe(1);
      const errors = onlyJson(r).errors as { key: string; error: string }[];
      expect(errors).toEqual([{ key: 'big.bin', error: expect.stringContaining(`${name} is a ${kind === 'symbolic' ? 'symbolic link' : 'hard link'}`) }]);
      expect(await readFile(t.outside, 'utf8')).toBe(OUTSIDE);
      expect(await readdir(t.out)).not.toContain('big.bin');
    });
  }

  it('on the way into --backup-dir: the replaced file is kept, the item fails, nothing written outside', async () => {
    const t = await pulledOnce({ 'sub/a.txt': 'aaa', 'b.txt': 'bbb' }, 'links-backup');
    expect((await t.pull()).code).toBe(0);
    // Changed here since the pull, so that --overwrite-changed would move it to the backup folder.
    await writeFile(join(t.out, 'sub', 'a.txt'), 'changed here');
    const backup = join(t.base, 'backup');
    const elsewhere = join(t.base, 'elsewhere');
    await mkdir(backup);
    await mkdir(elsewhere);
    await symlink(elsewhere, join(backup, 'sub'));
    const r = await t.pull('--overwrite-changed', '--backup-dir', backup);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(JSON.stringify(onlyJson(r).errors)).toContain('a symbolic link is in the way at sub');
    expect(await readdir(elsewhere)).toEqual([]);
    expect(await readFile(join(t.out, 'sub', 'a.txt'), 'utf8')).toBe('changed here');
  });

  it('at --manifest-out: the link is replaced by the manifest, never written through', async () => {
    const t = await pulledOnce({ 'a.txt': 'aaa' }, 'links-manifest');
    const manifest = join(t.base, 'manifest.csv');
    await symlink(t.outside, manifest);
    const r = await t.pull('--manifest-out', manifest);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(await readFile(t.outside, 'utf8')).toBe(OUTSIDE);
    expect((await lstat(manifest)).isSymbolicLink()).toBe(false);
    expect(await readFile(manifest, 'utf8')).toContain('a.txt');
  });
});
