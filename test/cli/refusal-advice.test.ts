// The report's advice is safe to follow (issue 77): for a document refused as ocrPageLimitExceeded
// it names the one file's row, and following it plans that file alone, not every file again.
import { describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempDirs } from '../helpers/temp.js';
import { useService, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

const tempDir = useTempDirs();
const service = useService();

describe('the advice for a document OCR refused', () => {
  it('names its manifest row; following it plans that document alone', async () => {
    const dir = await tempDir('ferry-advice-');
    const src = join(dir, 'src');
    await writeTree(src, { 'long.txt': 'many pages', 'a.txt': 'a', 'b.txt': 'b' });
    const rows = (long: string) => `path,Department,ocrStrategy\r\nlong.txt,Legal,${long}\r\na.txt,Legal,always\r\nb.txt,Legal,always\r\n`;
    await writeFile(join(dir, 'rows.csv'), rows('always'));
    const project = (await service().client().projects.create({ name: 'ocr advice', description: '' })).objectIdentifier;
    const args = ['mirror', src, '--project', project, '--manifest', join(dir, 'rows.csv'), '--state', join(dir, 's.sqlite')];
    service().emulator.setFaults('fail.ocrPageLimitExceeded=1');
    let refused: Record<string, unknown>;
    try {
      refused = onlyJson(await runFerry([...args, '--wait', '--json'], service().env()));
    } finally {
      service().emulator.setFaults('');
    }
    expect(refused.exitCode).toBe(1);
    const advice = (refused.errors as { key: string; error: string }[]).find((e) => e.key === 'long.txt')?.error;
    expect(advice).toContain('give its --manifest row ocrStrategy never (that document alone is sent again');
    // Followed: the one row changed; the plan sends that document alone.
    await writeFile(join(dir, 'rows.csv'), rows('never'));
    const plan = onlyJson(await runFerry([...args, '--dry-run', '--json'], service().env()));
    expect(plan).toMatchObject({ counts: { new: 0, changed: 1, unchanged: 2 } });
    expect(plan.items).toEqual([expect.objectContaining({ key: 'long.txt', why: 'metadata' })]);
  });
});
