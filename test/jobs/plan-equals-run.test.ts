// A dry run previews the run: for random trees, random states of the checkpoint store (its own
// earlier run, or none: another machine's) and random changes since (files added, rewritten at the same
// size, touched, grown, removed), random destinations (another store wrote the changes there
// since, or not), the plan's counts are what the run then does. The plan and the run share one
// judgement of an entry (src/sync/judge.ts), the present-document case included.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { mirror, planMirror } from '../../jobs/mirror.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { useService, writeTree } from '../helpers/service.js';

const service = useService();

/** A file of a tree: its folder, its name and its content's seed. */
const files = fc.uniqueArray(fc.record({ folder: fc.constantFrom('', 'a/', 'a/b/'), name: fc.constantFrom('x', 'y', 'z', 'w'), seed: fc.nat(5) }), { minLength: 1, maxLength: 8, selector: (f) => `${f.folder}${f.name}` });
/** What happens to a file between the two runs. */
const change = fc.constantFrom('same', 'touched', 'rewritten', 'grown', 'removed');
/** What the checkpoint store of the second run knows: its own first run, or nothing (another machine's, a fresh container's). */
const store = fc.constantFrom('own', 'fresh');
/** Whether another machine (its own store) mirrored the changed tree to the project before the second run. */
const otherWrote = fc.boolean();
/** --checksum on the second run. */
const checksum = fc.boolean();

const content = (seed: number) => `content ${seed} `.repeat(3);

describe('a dry run previews the run', () => {
  it('for random trees, stores and changes: new and changed are what the run uploads, unchanged what it leaves or reconciles', async () => {
    const s = service();
    const client = s.client();
    let round = 0;
    await fc.assert(
      fc.asyncProperty(files, fc.array(change, { minLength: 8, maxLength: 8 }), store, checksum, fc.boolean(), otherWrote, async (tree, changes, which, sums, firstSums, other) => {
        const dir = await mkdtemp(join(tmpdir(), 'ferry-plan-run-'));
        try {
          const src = join(dir, 'src');
          await writeTree(src, Object.fromEntries(tree.map((f) => [`${f.folder}${f.name}.txt`, content(f.seed)])));
          const project = (await client.projects.create({ name: `plan equals run ${round++}`, description: '' })).objectIdentifier;
          const first = new SqliteCheckpointStore(join(dir, 'first.sqlite'));
          expect((await mirror({ source: src, project, checksum: firstSums }, { client, store: first })).counts.uploaded).toBe(tree.length);
          // The changes, each keeping or moving the file's time.
          for (const [i, f] of tree.entries()) {
            const path = join(src, `${f.folder}${f.name}.txt`);
            const c = changes[i]!;
            if (c === 'removed') await rm(path);
            else if (c === 'rewritten') await writeFile(path, `X${content(f.seed).slice(1)}`);
            else if (c === 'grown') await writeFile(path, `${content(f.seed)}more`);
            else if (c === 'touched') await utimes(path, new Date(), new Date(Date.now() + 60_000 * (i + 1)));
          }
          if (tree.length < 8) await writeFile(join(src, 'added.txt'), 'a new file');
          if (other) {
            const elsewhere = new SqliteCheckpointStore(join(dir, 'other.sqlite'));
            await mirror({ source: src, project }, { client, store: elsewhere });
            elsewhere.close();
          }
          let second = first;
          if (which === 'fresh') {
            first.close();
            second = new SqliteCheckpointStore(join(dir, 'fresh.sqlite'));
          }
          const opts = { source: src, project, checksum: sums };
          const plan = await planMirror(opts, { client, store: second });
          const run = await mirror(opts, { client, store: second });
          second.close();
          const c = run.counts;
          expect({ sent: plan.new + plan.changed, kept: plan.unchanged }, JSON.stringify({ tree, changes, which, sums, firstSums, other, plan, counts: c })).toEqual({ sent: c.uploaded, kept: c.unchanged + c.reconciled });
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 25, seed: 7802 },
    );
  });
});
