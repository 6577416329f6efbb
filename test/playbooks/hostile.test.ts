// Archives built to hurt: each refused by the reader with its own message, naming the entry.
import { describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { ArchiveRejectedError, openArchive } from '../../src/playbooks/read.js';
import { HOSTILE, minimalEntries, playbookArchive } from '../helpers/archives.js';

describe('hostile archives', () => {
  for (const c of HOSTILE) {
    it(`refuses: ${c.name}`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'ferry-hostile-'));
      const path = join(dir, 'hostile.zip');
      await writeFile(path, await c.build());
      const err = await openArchive(path).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ArchiveRejectedError);
      expect((err as Error).message).toMatch(c.message);
    });
  }

  it('every case has its own message', () => {
    expect(new Set(HOSTILE.map((c) => c.message.source)).size).toBe(HOSTILE.length);
  });

  it('accepts the same archive unbent', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-hostile-'));
    const path = join(dir, 'fine.zip');
    await writeFile(path, await playbookArchive(minimalEntries([{ name: 'assemblies/0001/t.docx', data: 'x'.repeat(5000) }])));
    const archive = await openArchive(path);
    expect(archive.playbook.playbook.name).toBe('Minimal');
  });
});
