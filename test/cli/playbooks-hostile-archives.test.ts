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

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

async function count<T>(list: AsyncIterable<T>): Promise<number> {
  let n = 0;
  for await (const _ of list) n++;
  return n;
}

// One test per hostile archive (three `ferry` runs each), all built once and run against the one
// emulator: no single test needs more than a few seconds, however many archives the list grows to.
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

  it.each(HOSTILE.map((c) => [c.name, c] as const))('%s: refused with its own message, exit 2, in either mode; verify fails; nothing created', async (_, c) => {
    const path = paths.get(c.name)!;
    for (const mode of ['server', 'replay']) {
      const r = await runFerry(['playbooks', 'import', path, '--mode', mode, '--state', join(dir, `${mode}.sqlite`), '--json'], service.env(0));
      expect(r.code, `${c.name} (${mode}): ${r.stdout}`).toBe(2);
      expect(String(onlyJson(r).error), c.name).toMatch(c.message);
    }
    const verified = await runFerry(['playbooks', 'verify', path, '--json'], service.env(0));
    expect(verified.code).toBe(1);
    expect((onlyJson(verified) as { archives: { error: string }[] }).archives[0]!.error).toMatch(c.message);
    expect(await count(service.client({}, 0).playbooks.searchAll())).toBe(before);
  });
});
