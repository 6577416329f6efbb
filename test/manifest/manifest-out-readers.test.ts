// `pull --manifest-out` read back by a reader ferry did not write: Python's csv module. A cell
// holding a bare line feed (as the service keeps `取締役会議事録\n第二回`), a bare carriage return,
// a comma, a quote, a semicolon, Japanese and Cyrillic: Python reads exactly the rows ferry meant,
// no row split in two, and ferry reads the file back to the same metadata (a mirror of the pulled
// folder with it plans no change).
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { useService, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

const useEmulator = useService();

const ROWS: Record<string, Record<string, string>> = {
  'board/minutes.txt': { title: '取締役会議事録\n第二回', notes: 'line feed alone' },
  'board/old-mac.txt': { title: 'first\rsecond', notes: 'carriage return alone' },
  'prices/list.txt': { title: 'Preisliste Stand März', notes: 'a, comma; a semicolon and a "quote"' },
  'ru/contract.txt': { title: 'Договор поставки', notes: 'Кириллица\r\nwith CRLF' },
};

describe('pull --manifest-out read back by Python', () => {
  it('every row as ferry meant it, line breaks inside cells included', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-manifest-out-'));
    await writeTree(join(dir, 'src'), Object.fromEntries(Object.keys(ROWS).map((k) => [k, `content of ${k}`])));
    await writeFile(join(dir, 'in.jsonl'), Object.entries(ROWS).map(([path, metadata]) => JSON.stringify({ path, metadata })).join('\n'));
    const client = useEmulator().client();
    const project = (await client.projects.create({ name: 'manifest out', description: '' })).objectIdentifier;
    const env = useEmulator().env();
    const seeded = await runFerry(['mirror', join(dir, 'src'), '--project', project, '--manifest', join(dir, 'in.jsonl'), '--state', join(dir, 'm.sqlite'), '--json'], env);
    expect(seeded.code, seeded.stderr).toBe(0);

    const back = join(dir, 'back.csv');
    const pulled = await runFerry(['pull', project, join(dir, 'pulled'), '--manifest-out', back, '--state', join(dir, 'p.sqlite'), '--json'], env);
    expect(pulled.code, pulled.stderr).toBe(0);

    const script = 'import csv, json, sys\nwith open(sys.argv[1], newline="", encoding="utf-8-sig") as f:\n    print(json.dumps(list(csv.reader(f))))\n';
    const rows = JSON.parse(execFileSync('python3', ['-c', script, back], { encoding: 'utf8' })) as string[][];
    const [header, ...body] = rows;
    expect(header).toEqual(['path', 'notes', 'title']);
    expect(body).toHaveLength(Object.keys(ROWS).length);
    for (const [path, notes, title] of body) expect({ notes, title }, path).toEqual(ROWS[path!]);

    // ferry reads it back to the same metadata: a mirror of the pulled folder with it changes nothing.
    const plan = await runFerry(['mirror', join(dir, 'pulled'), '--project', project, '--manifest', back, '--dry-run', '--json'], env);
    expect(plan.code, plan.stderr).toBe(0);
    expect(onlyJson(plan)).toMatchObject({ counts: { new: 0, changed: 0, unchanged: 4 }, manifest: { unmatched: { count: 0 } } });
  });
});
