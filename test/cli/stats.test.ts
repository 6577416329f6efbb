// --stats DURATION: off a terminal a job writes a progress record that often (files/s beside
// bytes/s), and a value that does not read, or is under a second, is refused before anything runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startService, writeTree, type Service } from '../helpers/service.js';
import { runFerry } from '../helpers/cli.js';

let service: Service;
let src: string;
beforeAll(async () => {
  // Every request takes 100 ms: 30 uploads one at a time last about 3 s.
  service = await startService({ faults: 'latency=100' });
  const dir = await mkdtemp(join(tmpdir(), 'ferry-stats-'));
  src = join(dir, 'src');
  const files: Record<string, string> = {};
  for (let i = 0; i < 30; i++) files[`f${i}.txt`] = `file ${i}`;
  await writeTree(src, files);
});
afterAll(() => service.close());

describe('--stats', () => {
  it('writes a progress record each period off a terminal, with files/s', async () => {
    const client = service.client();
    const project = (await client.projects.create({ name: 'stats', description: '' })).objectIdentifier;
    const r = await runFerry(['mirror', src, '--project', project, '--concurrency', '1', '--stats', '1s', '--state', join(src, '..', 's.sqlite')], { ...service.env(), FERRY_LOG_LEVEL: 'silent' });
    expect(r.code, r.stderr).toBe(0);
    const records = r.stderr.split('\n').filter((l) => / progress \d+\/\d+\+? files .* files\/s /.test(l));
    expect(records.length, r.stderr).toBeGreaterThanOrEqual(1);
    expect(records[0]).toMatch(/^\d{4}-\d\d-\d\dT\S+Z progress /);
  });

  it('-q shows no progress and logs errors only; --log-file takes the log, -v at debug level', async () => {
    const client = service.client();
    const project = (await client.projects.create({ name: 'quiet', description: '' })).objectIdentifier;
    const env = { ...service.env(), FERRY_LOG_LEVEL: 'info' };
    const quiet = await runFerry(['-q', 'mirror', src, '--project', project, '--concurrency', '1', '--stats', '1s', '--state', join(src, '..', 'q.sqlite')], env);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).toBe('');
    const log = join(src, '..', 'logs', 'ferry.log');
    const verbose = await runFerry(['-v', '--log-file', log, 'mirror', src, '--project', project, '--state', join(src, '..', 'v.sqlite')], env);
    expect(verbose.code, verbose.stderr).toBe(0);
    expect(verbose.stderr).not.toMatch(/"level":/);
    const lines = (await readFile(log, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { level: number });
    expect(lines.some((l) => l.level === 20)).toBe(true);
    const both = await runFerry(['-v', '-q', 'ls'], env);
    expect(both.code).toBe(2);
  });

  it('refuses a period that does not read or is under a second', async () => {
    const bad = await runFerry(['mirror', src, '--project', service.project, '--stats', 'soon'], service.env());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--stats "soon" is not a duration');
    const short = await runFerry(['pull', service.project, join(src, '..', 'out'), '--stats', '500ms'], service.env());
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('--stats "500ms" is shorter than a second');
  });
});
