// The pull's record of names stays whole (issue 76): a damaged record keeps the lines that check
// out, and a rewrite notes every file the pull wrote that is still there, whatever its state, so
// that a restore (a mirror of the pulled folder) gives each document its original name.
// `ferry pull` and `ferry mirror` run as their own processes against the emulator.
import { describe, expect, it } from 'vitest';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempDirs } from '../helpers/temp.js';
import { mirroredProject, remoteFiles, useService } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { NAMES_FILE, readNamesFile } from '../../src/backends/names-record.js';

const tempDir = useTempDirs();
const service = useService();

/** Mapped under Windows' rules (`?` and `:` are written in FULLWIDTH), and one that is not. */
const FILES = { 'what?.txt': 'question', 'a:b.txt': 'colon', 'plain.txt': 'plain' };

describe('the record of names of a pulled folder', () => {
  it('damaged, with a file in conflict: the rewrite keeps the good lines and notes the conflicting file, and the restore gives the original names', async () => {
    const base = await tempDir('ferry-record-');
    const project = await mirroredProject(service().client(), join(base, 'src'), FILES, 'record-conflict');
    const out = join(base, 'out');
    const pull = () => runFerry(['pull', project, out, '--local-names', 'windows', '--state', join(base, 'pull.sqlite'), '--json'], service().env());
    expect((await pull()).code).toBe(0);
    const record = join(out, NAMES_FILE);
    const before = (await readNamesFile(out))!;
    expect([...before.names.values()].sort()).toEqual(['a:b.txt', 'what?.txt']);
    const mappedQuestion = [...before.names].find(([, name]) => name === 'what?.txt')![0];

    // The mapped file changed here: in conflict from the next pull on.
    await writeFile(join(out, mappedQuestion), 'changed here');
    expect((await pull()).code).toBe(1);
    // Then the record's last line edited by hand.
    const lines = (await readFile(record, 'utf8')).split('\n').filter(Boolean);
    const last = JSON.parse(lines[lines.length - 1]!) as { local: string; name: string; sum: string };
    lines[lines.length - 1] = JSON.stringify({ ...last, sum: '0000000000000000' });
    await writeFile(record, `${lines.join('\n')}\n`);

    const r = await pull();
    expect(r.code, r.stdout).toBe(1);
    expect(JSON.stringify(onlyJson(r).errors)).toContain('changed here since ferry wrote it');
    const after = (await readNamesFile(out))!;
    expect(after.damagedAt).toBeUndefined();
    expect(Object.fromEntries(after.names)).toEqual(Object.fromEntries(before.names));

    // The restore: every document under the name it had, the conflicting file too.
    const target = (await service().client().projects.create({ name: 'record-restore', description: '' })).objectIdentifier;
    const restored = await runFerry(['mirror', out, '--project', target, '--state', join(base, 'restore.sqlite'), '--json'], service().env());
    expect(restored.code, restored.stdout).toBe(0);
    expect((await remoteFiles(service().client(), target)).map((d) => d.path).sort()).toEqual(['/a:b.txt', '/plain.txt', '/what?.txt']);
  });
});
