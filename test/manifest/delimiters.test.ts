// A wrong separator is said as one: a quoted sheet read with another separator than its own (given
// by mistake, or a header the sniffing cannot tell) names the separator that reads it, whichever of
// , ; | and tab it is. Each of , ; and tab is found by itself when not given; | (rare, and a
// character names hold) is named, not guessed.
import { describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { readManifest, type ManifestRow } from '../../src/manifest/read.js';

const SEPARATORS: [string, string][] = [[',', '","'], [';', '";"'], ['|', '"|"'], ['\t', 'tab']];

async function sheet(sep: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-delim-'));
  const file = join(dir, 'sheet.csv');
  const cells = (cs: string[]) => cs.map((c) => `"${c.replace(/"/g, '""')}"`).join(sep);
  await writeFile(file, `\ufeff${cells(['path', 'client', 'notes'])}\r\n${cells(['a.txt', 'ACME, Inc.; Ltd | Co', 'said "yes"'])}\r\n${cells(['b.txt', 'Globex', 'tab\there'])}\r\n`);
  return file;
}

async function rows(file: string, delimiter?: string): Promise<ManifestRow[]> {
  const out: ManifestRow[] = [];
  for await (const row of readManifest(file, delimiter ? { delimiter } : {})) out.push(row);
  return out;
}

describe('manifest separators', () => {
  for (const [sep, said] of SEPARATORS) {
    it(`a quoted sheet split by ${said}: read, and named when another was given`, async () => {
      const file = await sheet(sep);
      if (sep === '|') await expect(rows(file)).rejects.toThrow(/give --manifest-delimiter "\|"/);
      const found = await rows(file, sep === '|' ? '|' : undefined);
      expect(found.map((r) => [r.path, r.metadata.client, r.metadata.notes])).toEqual([
        ['a.txt', 'ACME, Inc.; Ltd | Co', 'said "yes"'],
        ['b.txt', 'Globex', 'tab\there'],
      ]);
      for (const [wrong] of SEPARATORS.filter(([other]) => other !== sep)) {
        await expect(rows(file, wrong)).rejects.toThrow(new RegExp(`give --manifest-delimiter ${said.replace(/[|]/g, '\\|')}`));
      }
    });
  }
});
