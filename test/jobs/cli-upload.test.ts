// `ferry upload`, `watch` and `report` as a user runs them, including a crash while waiting.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { collect } from '../helpers/test-server.js';
import { remoteFiles, startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson } from '../helpers/cli.js';

const bin = fileURLToPath(new URL('../../bin/ferry.js', import.meta.url));
let service: Service;
beforeAll(async () => {
  // Slow processing, so that a run can be caught while it waits.
  service = await startService({ processing: { minDelayMs: 400, maxDelayMs: 800, seed: 2 } });
});
afterAll(() => service.close());

function ferry(args: string[], killWhen?: () => Promise<boolean>): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', FERRY_LOG_LEVEL: 'silent', ...service.env() } });
    let stdout = '';
    let stderr = '';
    let running = true;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    void (async () => {
      while (running && killWhen) {
        if (await killWhen()) return void child.kill('SIGKILL');
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    child.on('error', reject);
    child.on('close', (code, signal) => {
      running = false;
      resolve({ code, signal, stdout, stderr });
    });
  });
}

async function setup(files: Record<string, string>) {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-cli-upload-'));
  await writeTree(join(dir, 'src'), files);
  const client = service.client();
  const project = (await client.projects.create({ name: `cli upload ${dir}`, description: 'u' })).objectIdentifier;
  const playbook = (await client.playbooks.create({ name: `cli upload ${dir}`, isPrivate: false, organizationWide: true })).objectIdentifier;
  return { dir, client, project, playbook, state: join(dir, 'state.sqlite'), src: join(dir, 'src') };
}

describe('ferry upload (CLI)', () => {
  it('after a kill -9 while waiting, the rerun waits on the same batch and uploads nothing again', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 12; i++) files[`f${i}.txt`] = `file ${i}`;
    files['broken.pdf'] = 'no pdf header';
    const { client, project, playbook, state, src } = await setup(files);
    const args = ['upload', src, '--project', project, '--playbook', playbook, '--state', state, '--json'];

    // Killed once every file is on the service, i.e. while it waits for processing.
    const first = await ferry(args, async () => (await remoteFiles(client, project)).length === 13);
    expect(first.signal).toBe('SIGKILL');
    const batches = await collect(client.documentUploads.list(playbook));
    expect(batches).toHaveLength(1);

    const second = await ferry(args);
    expect(second.code, second.stderr).toBe(1); // one file failed processing
    const result = onlyJson(second) as any;
    expect(result).toMatchObject({ command: 'upload', status: 'failed', exitCode: 1 });
    expect(result.batches).toHaveLength(1);
    expect(result.batches[0].uploadIdentifier).toBe(batches[0]!.objectIdentifier);
    expect(result.batches[0].counts.uploaded).toBe(0);
    expect(result.remainingFailures).toEqual({ badFile: 1 });
    expect(await collect(client.documentUploads.list(playbook))).toHaveLength(1);
    expect(await remoteFiles(client, project)).toHaveLength(13);
    // The end of the batch was announced.
    expect(result.notifications.some((n: { resourceIdentifiers: Record<string, string> }) => Object.values(n.resourceIdentifiers).includes(batches[0]!.objectIdentifier))).toBe(true);
  });

  it('exits 5 when processing outlasts --timeout, and `ferry watch` then waits it out', async () => {
    const { project, playbook, state, src } = await setup({ 'a.txt': 'a', 'b.txt': 'b' });
    const timedOut = await ferry(['upload', src, '--project', project, '--playbook', playbook, '--state', state, '--timeout', '1ms', '--json']);
    expect(timedOut.code, timedOut.stderr).toBe(5);
    const answer = onlyJson(timedOut) as any;
    expect(answer).toMatchObject({ status: 'timeout', exitCode: 5, error: 'processing did not end within 1ms' });
    const batch = answer.batches[0].uploadIdentifier;
    const watched = await ferry(['watch', '--playbook', playbook, '--upload', batch, '--json']);
    expect(watched.code, watched.stderr).toBe(0);
    expect(onlyJson(watched)).toMatchObject({ status: 'succeeded', details: { completedDocumentCount: 2, processingDocumentCount: 0 } });
  });

  it('writes a report in every format, joining failed files to local paths through the checkpoint', async () => {
    const { dir, project, playbook, state, src } = await setup({ 'ok.txt': 'ok', 'sub/bad.7z': '7z' });
    const run = await ferry(['upload', src, '--project', project, '--playbook', playbook, '--state', state, '--json', '--ack']);
    expect(run.code, run.stderr).toBe(1);
    const batch = (onlyJson(run) as any).batches[0].uploadIdentifier;
    for (const format of ['text', 'json', 'csv', 'markdown', 'html']) {
      const out = join(dir, `report.${format}`);
      const r = await ferry(['report', '--playbook', playbook, '--upload', batch, '--state', state, '--format', format, '--out', out]);
      expect(r.code, r.stderr).toBe(0);
      const text = await readFile(out, 'utf8');
      expect(text, format).toContain('sub/bad.7z');
      expect(text, format).toContain('unsupportedFileType');
    }
    const json = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8'));
    expect(json.totals).toMatchObject({ files: 2, completed: 1, failed: 1 });
    // --ack marked the batch's notification read.
    const notes = await collect(service.client().notifications.list());
    const mine = notes.filter((n) => Object.values(n.resourceIdentifiers ?? {}).includes(batch));
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((n) => n.isRead)).toBe(true);
  });

  it('report: the playbook from the store, the format from --out, md for markdown, --json, disagreements refused; watch names the report to run', async () => {
    const { dir, playbook, project, state, src } = await setup({ 'ok.txt': 'ok', 'bad.7z': '7z' });
    const run = await ferry(['upload', src, '--project', project, '--playbook', playbook, '--state', state, '--json']);
    const batch = (onlyJson(run) as any).batches[0].uploadIdentifier as string;
    // No --playbook: ferry uploaded the batch, the store knows. No --format: the extension says html.
    const html = join(dir, 'r.html');
    const inferred = await ferry(['report', '--upload', batch, '--state', state, '--out', html]);
    expect(inferred.code, inferred.stderr).toBe(0);
    expect(await readFile(html, 'utf8')).toMatch(/^<!doctype html>/i);
    const md = await ferry(['report', '--upload', batch, '--state', state, '--format', 'md']);
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).toMatch(/^# /m);
    expect(md.stdout).toContain('| unsupportedFileType');
    const json = await ferry(['report', '--upload', batch, '--state', state, '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect((onlyJson(json) as any).report.totals).toMatchObject({ files: 2, failed: 1 });
    // Two formats asked for: refused, naming both, nothing written.
    const clash = await ferry(['report', '--upload', batch, '--state', state, '--format', 'csv', '--out', join(dir, 'r.md')]);
    expect(clash.code).toBe(2);
    expect(clash.stderr).toContain('looks like markdown but the format asked for is csv');
    await expect(readFile(join(dir, 'r.md'))).rejects.toThrow();
    // watch ends with the report command to run next.
    const watched = await ferry(['watch', '--playbook', playbook, '--upload', batch]);
    expect(watched.stdout).toContain(`report: ferry report --playbook ${playbook} --upload ${batch}`);
    // A batch this store never saw: its playbook (or, for a mirror's, its project) is needed, and said so.
    const elsewhere = await ferry(['report', '--upload', batch, '--state', join(dir, 'other.sqlite')]);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain('was not made through this checkpoint store');
    expect(elsewhere.stderr).toContain("--playbook ID for a playbook's");
    const given = await ferry(['report', '--upload', batch, '--playbook', playbook, '--state', join(dir, 'other.sqlite'), '--json']);
    expect(given.code).toBe(0);
  });
});
