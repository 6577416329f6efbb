// A new version of a pulled document is always downloaded (issue 76): one of the same size added
// within the time resolution of the one pulled (the service gives times to the minute, the day, or
// here to the year) has the same size and the same `dateAdded`, so the local file looks as the new
// version would leave it; it is another document all the same. `ferry pull` runs as its own
// process against an emulator that cuts every time it gives.
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { useTempDirs } from '../helpers/temp.js';
import { remoteFiles, useService } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { identityMetadata } from '../../src/backends/project/identity.js';
import { createHash } from 'node:crypto';

const tempDir = useTempDirs();
/** Every time the emulator gives is cut to a whole year: two uploads a moment apart have one `dateAdded`. */
const service = useService({ timeResolutionMs: 365 * 24 * 3600 * 1000 });

async function upload(project: string, content: string): Promise<void> {
  const bytes = Buffer.from(content);
  const metadata = identityMetadata({ path: 'report.txt', size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
  await service().client().documents.upload(project, { stream: Readable.from([bytes]), size: bytes.length, filename: 'report.txt' }, { documentUploadIdentifier: randomUUID(), metadata });
}

describe('a new version of a pulled document', () => {
  it('of the same size and within the time resolution of the one pulled: downloaded all the same', async () => {
    const project = (await service().client().projects.create({ name: 'versions', description: '' })).objectIdentifier;
    const base = await tempDir('ferry-versions-');
    const out = join(base, 'out');
    const pull = async () => onlyJson(await runFerry(['pull', project, out, '--state', join(base, 'state.sqlite'), '--json'], service().env()));
    await upload(project, 'version one');
    expect(await pull()).toMatchObject({ exitCode: 0, counts: { downloaded: 1 } });
    await upload(project, 'version two');
    const docs = await remoteFiles(service().client(), project);
    expect(docs).toHaveLength(2);
    expect(new Set(docs.map((d) => d.dateAdded)).size).toBe(1);
    expect(await pull()).toMatchObject({ exitCode: 0, counts: { downloaded: 1, failed: 0 } });
    expect(await readFile(join(out, 'report.txt'), 'utf8')).toBe('version two');
    // The older version, listed after the newer one with the same date, never takes its place: not now, not into a new folder.
    expect(await pull()).toMatchObject({ exitCode: 0, counts: { downloaded: 0 } });
    expect(await readFile(join(out, 'report.txt'), 'utf8')).toBe('version two');
    const again = join(base, 'again');
    expect(onlyJson(await runFerry(['pull', project, again, '--state', join(base, 'again.sqlite'), '--json'], service().env()))).toMatchObject({ exitCode: 0, counts: { downloaded: 1 } });
    expect(await readFile(join(again, 'report.txt'), 'utf8')).toBe('version two');
  });

  it('from a fresh store, over a folder holding the version before: never taken for the new one', async () => {
    const project = (await service().client().projects.create({ name: 'versions fresh', description: '' })).objectIdentifier;
    const base = await tempDir('ferry-versions-');
    const out = join(base, 'out');
    await upload(project, 'version one');
    const first = onlyJson(await runFerry(['pull', project, out, '--state', join(base, 'a.sqlite'), '--json'], service().env()));
    expect(first).toMatchObject({ exitCode: 0, counts: { downloaded: 1 } });
    await upload(project, 'version two');
    // Another machine's store (or none): the file there has the new version's size and time, not its bytes.
    const fresh = onlyJson(await runFerry(['pull', project, out, '--state', join(base, 'b.sqlite'), '--json'], service().env()));
    expect(fresh).toMatchObject({ exitCode: 1, counts: { downloaded: 0, reconciled: 0, failed: 1 } });
    expect(JSON.stringify(fresh.errors)).toContain('in the way');
    expect(await readFile(join(out, 'report.txt'), 'utf8')).toBe('version one');
  });
});
