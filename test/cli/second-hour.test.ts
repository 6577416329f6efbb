// A newcomer's second hour, each stumble tried as a new user meets it: `ferry` as a child process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startService, writeTree, type Service } from '../helpers/service.js';
import { runFerry } from '../helpers/cli.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

describe("a newcomer's second hour", () => {
  it('`ferry backup` points to `ferry playbooks backup`', async () => {
    const r = await runFerry(['backup'], service.env());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'backup'");
    expect(r.stderr).toContain('Did you mean ferry playbooks backup?');
  });

  it('a missing .zip or .tar.gz is called a file, not a folder', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-second-hour-'));
    for (const name of ['export.zip', 'export.tar.gz']) {
      const r = await runFerry(['mirror', join(dir, name), '--project', service.project, '--state', join(dir, 's.sqlite')], service.env());
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`source file ${join(dir, name)} cannot be read: ENOENT`);
      expect(r.stderr).not.toContain('folder');
    }
  });

  it('-n is --dry-run', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-second-hour-n-'));
    await writeTree(join(dir, 'share'), { 'a.txt': 'a' });
    const r = await runFerry(['mirror', join(dir, 'share'), '--project', service.project, '--to', 'second-hour', '--state', join(dir, 's.sqlite'), '-n'], service.env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('plan (nothing was changed)');
    expect(r.stdout).toContain('upload, new: a.txt');
  });
});
