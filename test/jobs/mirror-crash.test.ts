// kill -9 at random moments of a mirror run, resume each time, and check through the API that
// every file arrived exactly once, with the right size, in the right folder.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { remoteFiles, startService, writeTree, type Service } from '../helpers/service.js';

const bin = fileURLToPath(new URL('../../bin/ferry.js', import.meta.url));
let service: Service;

beforeAll(async () => {
  service = await startService({ faults: { latencyMs: 2 } });
});
afterAll(() => service.close());

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs ferry; `killWhen` is polled while it runs and a true answer kills it with SIGKILL. */
function ferry(args: string[], env: Record<string, string>, killWhen?: () => Promise<boolean>): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', FERRY_LOG_LEVEL: 'silent', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    let running = true;
    const watch = async () => {
      while (running && killWhen) {
        if (await killWhen()) {
          child.kill('SIGKILL');
          return;
        }
        await new Promise((r) => setTimeout(r, 15));
      }
    };
    void watch();
    child.on('error', reject);
    child.on('close', (code, signal) => {
      running = false;
      resolve({ code, signal, stdout, stderr });
    });
  });
}

describe('mirror survives kill -9', () => {
  it('leaves every file uploaded exactly once after random kills and resumes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-crash-'));
    const src = join(dir, 'src');
    // 150 files in 10 folders of 3 subfolders: enough for kills mid-run, little enough that six
    // runs and their resumes end in seconds on one slow core.
    const FILES = 150;
    const files: Record<string, string> = {};
    for (let i = 0; i < FILES; i++) files[`folder-${i % 10}/sub-${i % 3}/file-${i}.txt`] = `content of file ${i} `.repeat(1 + (i % 50));
    await writeTree(src, files);
    const client = service.client();
    const project = (await client.projects.create({ name: 'crash test', description: 'kill -9' })).objectIdentifier;
    const state = join(dir, 'state.sqlite');
    const env = service.env();
    const mirrorArgs = ['mirror', src, '--project', project, '--state', state, '--concurrency', '4', '--json'];

    const uploadedSoFar = async () => (await client.documents.list(project, { flattenList: true }).page(1, 1)).totalCount ?? 0;
    const kills: string[] = [];
    let killedMidRun = 0;
    for (let attempt = 0; attempt < 6; attempt++) {
      // A random moment: once the service holds a random number of the remaining documents
      // (folders included, where the service makes them), or, one time in three, at a random
      // instant of start-up. The target stays at least 20 short of the files alone, so that it is
      // reached with work still to do whether or not folders count (the strict emulator makes
      // none): the first run is always killed mid-run, never by luck alone.
      const before = await uploadedSoFar();
      const target = before + 1 + Math.floor(Math.random() * Math.max(1, FILES - 20 - before));
      const startupKill = Math.random() < 1 / 3;
      const started = Date.now();
      const deadline = 50 + Math.floor(Math.random() * 400);
      const killWhen = startupKill ? async () => Date.now() - started >= deadline : async () => (await uploadedSoFar()) >= target;
      // Alternate between a plain rerun and `ferry jobs resume` of the last run.
      const runs = (JSON.parse((await ferry(['jobs', 'list', '--state', state, '--json'], env)).stdout || '{"items":[]}') as { items: { id: number; status: string }[] }).items;
      const last = runs[0];
      const args = attempt % 2 === 1 && last && last.status !== 'succeeded' ? ['jobs', 'resume', String(last.id), '--state', state, '--json'] : mirrorArgs;
      const r = await ferry(args, env, killWhen);
      kills.push(startupKill ? `${deadline} ms` : `${target} documents`);
      if (r.signal === 'SIGKILL') killedMidRun++;
      else expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    }
    const final = await ferry(mirrorArgs, env);
    const history = (JSON.parse((await ferry(['jobs', 'list', '--state', state, '--json'], env)).stdout) as { items: { id: number; status: string; counts: { reconciled: number; uploaded: number } }[] }).items;
    console.log("crash test: kills at", kills.join(", "), "; reconciled", JSON.stringify(history.map((h) => [h.id, h.status, h.counts.uploaded, h.counts.reconciled])));
    expect(final.code, final.stderr).toBe(0);
    const summary = JSON.parse(final.stdout);
    expect(summary.status).toBe('succeeded');

    const remote = await remoteFiles(client, project);
    const byPath = new Map<string, number>();
    for (const doc of remote) byPath.set(doc.path ?? '', (byPath.get(doc.path ?? '') ?? 0) + 1);
    const duplicates = [...byPath].filter(([, n]) => n > 1);
    expect(duplicates, `kills at ${kills.join(', ')}`).toEqual([]);
    expect(remote).toHaveLength(FILES);
    for (const doc of remote) {
      const key = (doc.path ?? '').slice(1);
      expect(doc.size, key).toBe(Buffer.byteLength(files[key] ?? ''));
    }
    // The test is only meaningful if some kills landed while work was going on.
    expect(killedMidRun).toBeGreaterThan(0);
  });
});
