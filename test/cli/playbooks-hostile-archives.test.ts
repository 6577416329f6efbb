// `ferry playbooks import` and `verify` of hostile archives: each refused with its own message,
// exit 2, in either import mode, with nothing created. An archive is checked whole before any
// request, so this runs against the default emulator only (vitest.config.ts): the strict one
// would answer nothing differently.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startService, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { HOSTILE } from '../helpers/archives.js';
import { count } from '../helpers/playbook.js';
import { importArchive } from '../../jobs/playbooks.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

// One test per hostile archive, all built once and run against the one emulator: the command as a
// user runs it in one import mode, the same job in-process in the other (the refusal comes before
// the mode matters), and one `verify` over the folder of them all.
describe('ferry playbooks import of a hostile archive', () => {
  const dir = join(tmpdir(), `ferry-pb-hostile-${process.pid}`);
  const paths = new Map<string, string>();
  let before = 0;
  beforeAll(async () => {
    await mkdir(dir, { recursive: true });
    before = await count(service.client({}, 0).playbooks.searchAll());
    for (const c of HOSTILE) {
      const path = join(dir, `${c.name.replace(/\W+/g, '-')}.zip`);
      await writeFile(path, await c.build());
      paths.set(c.name, path);
    }
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it.each(HOSTILE.map((c, i) => [c.name, c, i] as const))('%s: refused with its own message, exit 2, in either mode; nothing created', async (_, c, i) => {
    const path = paths.get(c.name)!;
    // The modes alternate between the command and the in-process job from one archive to the next.
    const [cliMode, jobMode] = i % 2 === 0 ? (['server', 'replay'] as const) : (['replay', 'server'] as const);
    const r = await runFerry(['playbooks', 'import', path, '--mode', cliMode, '--state', join(dir, 'cli.sqlite'), '--json'], service.env(0));
    expect(r.code, `${c.name} (${cliMode}): ${r.stdout}`).toBe(2);
    expect(onlyJson(r)).toMatchObject({ status: 'error', exitCode: 2 });
    expect(String(onlyJson(r).error), c.name).toMatch(c.message);
    const store = new SqliteCheckpointStore(join(dir, `job-${i}.sqlite`));
    try {
      await expect(importArchive({ file: path, mode: jobMode }, { client: service.client({}, 0), store }), `${c.name} (${jobMode})`).rejects.toThrow(c.message);
    } finally {
      store.close();
    }
    expect(await count(service.client({}, 0).playbooks.searchAll())).toBe(before);
  });

  it('verify over the folder names each archive with its own reason (exit 1)', async () => {
    const verified = await runFerry(['playbooks', 'verify', dir, '--json'], service.env(0));
    expect(verified.code).toBe(1);
    const archives = (onlyJson(verified) as { archives: { path: string; error?: string }[] }).archives;
    expect(archives).toHaveLength(HOSTILE.length);
    for (const c of HOSTILE) expect(archives.find((a) => a.path === paths.get(c.name))?.error, c.name).toMatch(c.message);
  });
});
