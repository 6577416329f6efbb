// `ferry playbooks` as users run it: a replay import killed (kill -9) twice and resumed, every
// sub-resource once; hostile archives refused with nothing created; --json and exit codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startService, type Service } from '../helpers/service.js';
import { buildRichPlaybook, comparable, count } from '../helpers/playbook.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { openArchive } from '../../src/playbooks/read.js';
import type { FerryClient } from '../../src/api/client.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

async function playbooksNamed(client: FerryClient, name: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const p of client.playbooks.searchAll()) if (p.name === name) ids.push(p.objectIdentifier);
  return ids;
}

describe('ferry playbooks (CLI)', () => {
  it('a replay import killed twice midway and resumed leaves every sub-resource exactly once', async () => {
    const a = service.client({}, 0);
    const b = service.client({}, 1);
    const name = 'Killed midway';
    const ASSEMBLIES = 10;
    const built = await buildRichPlaybook(a, service.emulator.tenants[0]!, { name, assemblies: ASSEMBLIES });
    const dir = await mkdtemp(join(tmpdir(), 'ferry-pb-cli-'));
    const zip = join(dir, 'pb.zip');
    const exported = await runFerry(['playbooks', 'export', built.id, '--out', zip, '--state', join(dir, 'a.sqlite'), '--json'], service.env(0));
    expect(exported.code, exported.stderr).toBe(0);
    expect(onlyJson(exported)).toMatchObject({ status: 'succeeded', counts: { discovered: 1, written: 1 } });
    const map = join(dir, 'map.yaml');
    await writeFile(map, `organizationMetadata:\n${service.emulator.tenants[1]!.organizationMetadata.map((d) => `  "${d.name}": ${d.objectIdentifier}`).join('\n')}\n`);
    const args = ['playbooks', 'import', zip, '--mode', 'replay', '--map', map, '--state', join(dir, 'b.sqlite'), '--json'];

    // Slow enough to be caught half-way; each kill happens at a different stage.
    service.emulator.setFaults('latency=15');
    const stages: ((pb: string) => Promise<boolean>)[] = [
      async (pb) => (await count(b.assemblies.list(pb))) >= 3,
      async (pb) => {
        for await (const asm of b.assemblies.list(pb)) {
          const tree = await b.assemblies.richText(pb, asm.objectIdentifier as string);
          if ((tree.content?.length ?? 0) > 0) return true;
        }
        return false;
      },
    ];
    const killedAt: string[] = [];
    for (const [i, stage] of stages.entries()) {
      const r = await runFerry(args, service.env(1), (child) => {
        void (async () => {
          for (let poll = 0; poll < 2000 && child.exitCode === null; poll++) {
            const [pb] = await playbooksNamed(b, name);
            if (pb && (await stage(pb))) {
              child.kill('SIGKILL');
              killedAt.push(`stage ${i + 1} at poll ${poll}`);
              return;
            }
            await new Promise((r) => setTimeout(r, 5));
          }
        })();
      });
      expect(r.code, `run ${i + 1} was meant to be killed: ${r.stdout}${r.stderr}`).toBeNull();
    }
    service.emulator.setFaults('');
    const last = await runFerry(args, service.env(1));
    expect(last.code, last.stderr).toBe(0);
    const summary = onlyJson(last) as { counts: Record<string, number>; playbookIdentifier: string };
    // 1 + 4 metadata + 3 materials + 10 assemblies + 10 files + 20 columns + 20 conditions
    expect(summary.counts.discovered).toBe(68);
    expect(summary.counts.reconciled).toBeGreaterThan(0);
    // Every part of the archive is accounted for once: created now, or found in place.
    expect(summary.counts.created + summary.counts.reconciled + summary.counts.skipped + summary.counts.failed).toBe(68);
    console.log(`replay killed at ${killedAt.join(', ')}; the final run created ${summary.counts.created} and found ${summary.counts.reconciled} in place`);

    expect(await playbooksNamed(b, name)).toEqual([summary.playbookIdentifier]);
    const pb = summary.playbookIdentifier;
    expect(await count(b.assemblies.list(pb))).toBe(ASSEMBLIES);
    expect(await count(b.referenceMaterials.list(pb))).toBe(3);
    expect(await count(b.playbookMetadata.list(pb))).toBe(4);
    const again = await runFerry(['playbooks', 'export', pb, '--out', join(dir, 'b.zip'), '--state', join(dir, 'b2.sqlite'), '--json'], service.env(1));
    expect(again.code, again.stderr).toBe(0);
    const [original, copy] = [await openArchive(zip), await openArchive(join(dir, 'b.zip'))];
    // Equal but for ids and dates: so no column, condition or material is there twice.
    expect(comparable(copy.playbook)).toEqual(comparable(original.playbook));

    // Once done, the same import again creates nothing.
    const noop = onlyJson(await runFerry(args, service.env(1))) as { counts: Record<string, number> };
    expect(noop.counts).toMatchObject({ created: 0, reconciled: 68 });
  });

  it('names what a replay cannot map before creating anything', async () => {
    // A fresh service: tenant B has no playbook or project whose metadata would reveal the names.
    const fresh = await startService();
    const a = fresh.client({}, 0);
    const b = fresh.client({}, 1);
    const built = await buildRichPlaybook(a, fresh.emulator.tenants[0]!, { name: 'Unmapped', assemblies: 1 });
    const dir = await mkdtemp(join(tmpdir(), 'ferry-pb-unmapped-'));
    const zip = join(dir, 'pb.zip');
    expect((await runFerry(['playbooks', 'export', built.id, '--out', zip, '--state', join(dir, 's.sqlite')], fresh.env(0))).code).toBe(0);
    const before = await count(b.playbooks.searchAll());
    const r = await runFerry(['playbooks', 'import', zip, '--mode', 'replay', '--state', join(dir, 's.sqlite'), '--json'], fresh.env(1));
    // A configuration problem (exit 2), found before any write.
    expect(r.code).toBe(2);
    expect(String(onlyJson(r).error)).toMatch(/the target shows no organization metadata named as "Region" \(.*\), "Department".*nothing was created/);
    expect(await count(b.playbooks.searchAll())).toBe(before);
    await fresh.close();
  });

  it('a second export into the same place while one runs is refused: exit 4 and one JSON object', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-pb-lock-'));
    const out = join(dir, 'out');
    const state = join(dir, 'state.sqlite');
    const store = new SqliteCheckpointStore(state);
    expect(store.acquireLock(`playbooks-export|${service.emulator.baseUrl}|${out}`, 'this-test', 7)).toMatchObject({ ok: true });
    try {
      const r = await runFerry(['playbooks', 'export', '--all', '--out', out, '--state', state, '--json'], service.env(0));
      expect(r.code).toBe(4);
      expect(onlyJson(r)).toMatchObject({ status: 'locked', exitCode: 4, holder: { runId: 7, pid: process.pid } });
    } finally {
      store.close();
    }
  });
});
