// The manifest's reading and lookup, on real files in a temp folder: what a row meets, and each
// way a sheet can be wrong said with its line.
import { describe, expect, it } from 'vitest';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Manifest, ManifestError } from '../../src/manifest/index.js';
import { readManifest, sniffDelimiter } from '../../src/manifest/read.js';

async function file(name: string, content: string | Buffer): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-manifest-unit-'));
  await writeFile(join(dir, name), content);
  return join(dir, name);
}

async function rows(path: string, delimiter?: string) {
  const out = [];
  for await (const row of readManifest(path, delimiter ? { delimiter } : {})) out.push(row);
  return out;
}

describe('reading a manifest', () => {
  it('finds the separator from the header, outside quotes', () => {
    expect(sniffDelimiter(Buffer.from('path;client;"a,b,c,d"\r\nx;y;z'))).toBe(';');
    expect(sniffDelimiter(Buffer.from('\ufeffpath,client\n'))).toBe(',');
    expect(sniffDelimiter(Buffer.from('path\tclient\tmatter\n'))).toBe('\t');
    expect(sniffDelimiter(Buffer.from('path\n'))).toBe(',');
  });

  it('reads a tab-separated sheet, and says where a header reads as one column', async () => {
    expect((await rows(await file('t.tsv', 'path\tclient\na.txt\tA\n')))[0]).toMatchObject({ path: 'a.txt', metadata: { client: 'A' } });
    await expect(rows(await file('p.csv', 'path|client\na.txt|A\n'))).rejects.toThrow(/has no "path" column; it reads as one column split by ",": give --manifest-delimiter/);
    expect((await rows(await file('p.csv', 'path|client\na.txt|A\n'), '|'))[0]).toMatchObject({ metadata: { client: 'A' } });
  });

  it('refuses what it cannot read, naming the line', async () => {
    await expect(rows(await file('u16.csv', Buffer.from('\ufeffpath\na\n', 'utf16le')))).rejects.toThrow(/it is UTF-16/);
    await expect(rows(await file('wide.csv', 'path,client\na.txt,A,extra\n'))).rejects.toThrow(/line 2: .*every row has as many cells as the header/);
    await expect(rows(await file('Path.csv', 'Path,client\na.txt,A\n'))).rejects.toThrow(/"Path" is not it: the name is path, in lower case/);
    await expect(rows(await file('dup.csv', 'path,client,client\na,b,c\n'))).rejects.toThrow(/the column "client" is named twice/);
    await expect(rows(await file('up.csv', 'path\n../etc/passwd\n'))).rejects.toThrow(/line 2: the path "\.\.\/etc\/passwd" is not a plain relative path/);
    await expect(rows(await file('dir.csv', 'path\nfolder/\n'))).rejects.toThrow(/line 2: the path "folder\/" names a folder/);
    const jsonl = (text: string) => file('m.jsonl', text);
    await expect(rows(await jsonl('{"path":"a","metadata":{"n":1}}\n'))).rejects.toThrow(/line 1: the metadata "n" is not a string/);
    await expect(rows(await jsonl('\n{"path":"a","colour":"red"}\n'))).rejects.toThrow(/line 2: "colour" is not a field of a manifest line/);
    await expect(rows(await jsonl('{"path":"a"}\n{nope\n'))).rejects.toThrow(/line 2: not JSON/);
    await expect(rows(await jsonl('{"path":"a","ocrEngine":"engineZ"}\n'))).rejects.toThrow(/line 1: ocrEngine "engineZ" is not one the service has/);
  });
});

describe('looking rows up', () => {
  it("meets a macOS (decomposed) name with a spreadsheet's (composed) one, and refuses two rows that are one path once composed", async () => {
    const composed = 'Résumé.pdf'.normalize('NFC');
    const decomposed = composed.normalize('NFD');
    const manifest = await Manifest.load(await file('m.csv', `path,client\n${composed},A\nother.txt,B\n`));
    try {
      expect(manifest.lookup(decomposed)?.metadata).toEqual({ client: 'A' });
      expect(manifest.lookup('missing.txt')).toBeUndefined();
      expect(manifest.unmatched()).toEqual({ count: 1, paths: ['other.txt'] });
      // A path the run's patterns leave out is there, only not carried.
      expect(manifest.unmatched((key) => key !== 'other.txt').count).toBe(0);
    } finally {
      await manifest.close();
    }
    await expect(Manifest.load(await file('twice.csv', `path,client\n${composed},A\n${decomposed},B\n`))).rejects.toThrow(/line 3: .* has a row already, on line 2 \(the same path once composed \(NFC\)\)/);
  });

  it('keeps its rows in a scratch file, removed when it closes (and when loading fails)', async () => {
    const before = (await readdir(tmpdir())).filter((n) => n.startsWith(`ferry-manifest-${process.pid}-`)).length;
    const manifest = await Manifest.load(await file('m.csv', 'path\na\n'));
    expect((await readdir(tmpdir())).filter((n) => n.startsWith(`ferry-manifest-${process.pid}-`)).length).toBe(before + 1);
    await manifest.close();
    await expect(Manifest.load(await file('bad.csv', 'path\na\na\n'))).rejects.toBeInstanceOf(ManifestError);
    expect((await readdir(tmpdir())).filter((n) => n.startsWith(`ferry-manifest-${process.pid}-`)).length).toBe(before);
  });
});
