// `ferry api -F file=@PATH` sends a multipart/form-data body, as `gh api` does (issue 77): an
// assembly or one document uploaded with auth handled, no curl and no token fetched by hand.
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempDirs } from '../helpers/temp.js';
import { remoteFiles, useService } from '../helpers/service.js';
import { runFerry } from '../helpers/cli.js';

const tempDir = useTempDirs();
const service = useService();

describe('ferry api -F key=@FILE', () => {
  it('uploads the file as a form part, the other fields beside it; GET with a file is refused', async () => {
    const dir = await tempDir('ferry-api-F-');
    await writeFile(join(dir, 'report.txt'), 'sent by ferry api');
    const project = (await service().client().projects.create({ name: 'api upload', description: '' })).objectIdentifier;
    const r = await runFerry(['api', 'POST', `/projects/${project}/documents?documentUploadIdentifier=${randomUUID()}`, '-F', `file=@${join(dir, 'report.txt')}`, '-f', 'ocrStrategy=never'], service().env());
    expect(r.code, r.stderr).toBe(0);
    const answer = JSON.parse(r.stdout) as { objectIdentifier: string; name: string };
    expect(answer.name).toBe('report.txt');
    const [doc] = await remoteFiles(service().client(), project);
    expect(doc).toMatchObject({ objectIdentifier: answer.objectIdentifier, size: 17, ocrStrategy: 'never' });
    const refused = await runFerry(['api', 'GET', `/projects/${project}/documents`, '-F', `file=@${join(dir, 'report.txt')}`], service().env());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('use POST or PUT');
  });
});
