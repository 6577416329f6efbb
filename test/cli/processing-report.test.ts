// After the upload: what the service's processing did with a mirror's documents, for any batch.
// Files processing refuses (`.bin`: unsupportedFileType, an empty file: badFile) mirrored by
// `ferry` as a child process into the emulator over loopback, then waited on and reported.
import { describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { useService, writeServiceProfiles, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

const useEmulator = useService();

type Summary = {
  status: string;
  exitCode: number;
  runId: number;
  uploadIdentifier: string;
  counts: Record<string, number>;
  errors: { key: string; error: string }[];
  processing?: { documents: number; completed: number; refused: number; processing: number; failedReasonSummary: Record<string, number>; timedOut: boolean };
};

async function refusedTree(label: string): Promise<{ dir: string; src: string; project: string; state: string }> {
  const dir = await mkdtemp(join(tmpdir(), `ferry-processing-${label}-`));
  const src = join(dir, 'share');
  await writeTree(src, { 'ok.txt': 'indexed', 'sub/blob.bin': Buffer.from([1, 2, 3, 4]), 'empty.txt': '' });
  const project = (await useEmulator().client().projects.create({ name: `processing ${label}`, description: 'issue 52' })).objectIdentifier;
  return { dir, src, project, state: join(dir, 'state.sqlite') };
}

describe('what processing refused after a mirror', () => {
  it('mirror --wait exits 1 naming each refused file with its reason, in JSON and in text; report and watch take its batch with no --playbook', async () => {
    const t = await refusedTree('wait');
    const r = await runFerry(['mirror', t.src, '--project', t.project, '--state', t.state, '--wait', '--timeout', '60s', '--json'], useEmulator().env());
    expect(r.code, r.stderr).toBe(1);
    const summary = onlyJson(r) as Summary;
    expect(summary.status).toBe('failed');
    expect(summary.counts).toMatchObject({ uploaded: 3, failed: 0 });
    expect(summary.processing).toEqual({ documents: 3, completed: 1, refused: 2, processing: 0, failedReasonSummary: { badFile: 1, unsupportedFileType: 1 }, timedOut: false, waited: true });
    expect(summary.errors).toEqual([
      { key: 'empty.txt', error: expect.stringMatching(/^refused by the service's processing: badFile \(/) },
      { key: 'sub/blob.bin', error: expect.stringMatching(/^refused by the service's processing: unsupportedFileType \(.*--exclude/) },
    ]);

    // The same store, no --playbook: the run's batch, by run and by id.
    for (const args of [['--run', 'last'], ['--run', String(summary.runId)], ['--upload', summary.uploadIdentifier]]) {
      const report = onlyJson(await runFerry(['report', ...args, '--state', t.state, '--json'], useEmulator().env())) as { report: { totals: Record<string, number>; reasons: { reason: string; count: number }[]; failedFiles: { localPath: string; reason: string }[]; project: string; playbookIdentifier: null } };
      expect(report.report.totals, args.join(' ')).toMatchObject({ files: 3, completed: 1, failed: 2, processing: 0 });
      expect(report.report.reasons.map((x) => [x.reason, x.count])).toEqual([['badFile', 1], ['unsupportedFileType', 1]]);
      expect(report.report.failedFiles.map((f) => [f.localPath, f.reason])).toEqual([['empty.txt', 'badFile'], ['sub/blob.bin', 'unsupportedFileType']]);
      expect(report.report).toMatchObject({ project: t.project, playbookIdentifier: null });
    }
    const text = await runFerry(['report', '--run', 'last', '--state', t.state], useEmulator().env());
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`batch ${summary.uploadIdentifier} of project ${t.project}`);
    expect(text.stdout).toMatch(/unsupportedFileType\s+sub\/blob\.bin/);

    const watch = await runFerry(['watch', '--run', 'last', '--state', t.state, '--json'], useEmulator().env());
    expect(watch.code).toBe(1);
    expect(onlyJson(watch)).toMatchObject({ details: { totalDocumentCount: 3, completedDocumentCount: 1, failedDocumentCount: 2 }, next: `ferry report --project ${t.project} --upload ${summary.uploadIdentifier} --state ${t.state}` });

    // check: there and matching, but not simply: refused counted by reason, in JSON and text.
    const check = onlyJson(await runFerry(['check', t.src, '--project', t.project, '--json'], useEmulator().env())) as { matching: number; refused: Record<string, number> };
    expect(check).toMatchObject({ matching: 3, refused: { badFile: 1, unsupportedFileType: 1 } });
    const checkText = await runFerry(['check', t.src, '--project', t.project], useEmulator().env());
    expect(checkText.stdout).toContain("of the matching, 2 refused by the service's processing (there, but not indexed): badFile 1, unsupportedFileType 1");

    // ls marks a refused document and its reason.
    const ls = await runFerry(['ls', t.project, '-R'], useEmulator().env());
    expect(ls.stdout).toMatch(/sub\/blob\.bin  \[refused: unsupportedFileType\]/);
    expect(ls.stdout).toMatch(/ok\.txt\n/);
    const lsJson = onlyJson(await runFerry(['ls', t.project, '-R', '--json'], useEmulator().env())) as { items: { path: string; refused: string | null }[] };
    expect(lsJson.items.filter((i) => i.refused).map((i) => [i.path, i.refused])).toEqual([['/empty.txt', 'badFile'], ['/sub/blob.bin', 'unsupportedFileType']]);

    // In text, the run names each refused file and says how to read the reasons.
    const again = await refusedTree('wait-text');
    const plain = await runFerry(['mirror', again.src, '--project', again.project, '--state', again.state, '--wait'], useEmulator().env());
    expect(plain.code).toBe(1);
    expect(plain.stdout).toContain('processed: 1 indexed, 2 refused (badFile 1, unsupportedFileType 1)');
    expect(plain.stdout).toContain('sub/blob.bin: refused by the service\'s processing: unsupportedFileType');
  });

  it('report --upload with --project from a fresh store (another machine) gives the counts and the paths from the documents themselves', async () => {
    const t = await refusedTree('fresh');
    const r = onlyJson(await runFerry(['mirror', t.src, '--project', t.project, '--state', t.state, '--json'], useEmulator().env())) as Summary;
    const fresh = join(t.dir, 'elsewhere.sqlite');
    const watch = await runFerry(['watch', '--upload', r.uploadIdentifier, '--project', t.project, '--state', fresh, '--json'], useEmulator().env());
    expect(watch.code).toBe(1);
    const report = onlyJson(await runFerry(['report', '--upload', r.uploadIdentifier, '--project', t.project, '--state', fresh, '--json'], useEmulator().env())) as { report: { totals: Record<string, number>; failedFiles: { localPath: string; reason: string }[] } };
    expect(report.report.totals).toMatchObject({ files: 3, completed: 1, failed: 2 });
    expect(report.report.failedFiles.map((f) => [f.localPath, f.reason])).toEqual([['empty.txt', 'badFile'], ['sub/blob.bin', 'unsupportedFileType']]);
  });

  it('bad input: a batch id that is in neither place is exit 2 saying both were looked for; no batch at all names the flags; --wait with --dry-run is told it does nothing', async () => {
    const t = await refusedTree('bad');
    const unknown = await runFerry(['report', '--upload', '11111111-2222-4333-8444-555555555555', '--project', t.project, '--state', t.state, '--json'], useEmulator().env());
    expect(unknown.code).toBe(2);
    expect((onlyJson(unknown) as { error: string }).error).toContain('looked for both');
    const none = await runFerry(['report', '--upload', '11111111-2222-4333-8444-555555555555', '--state', t.state], useEmulator().env());
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('give --project ID');
    const neither = await runFerry(['report', '--state', t.state], useEmulator().env());
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('--upload ID');
    const dry = await runFerry(['mirror', t.src, '--project', t.project, '--state', t.state, '--dry-run', '--wait'], useEmulator().env());
    expect(dry.code).toBe(0);
    expect(dry.stderr).toContain('--wait does nothing with --dry-run');
  });
});

describe("migrate --wait: the target's processing", () => {
  it('exit 1 naming each document the target refused (no credits left there), by project and path, with the report to run', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-processing-migrate-'));
    const emu = useEmulator().emulator;
    const config = writeServiceProfiles(useEmulator(), join(dir, 'profiles.yaml'));
    const [from, to] = [emu.tenants[0]!, emu.tenants[1]!];
    /** A project of the source tenant holding two indexed documents. */
    const sourceProject = async (name: string) => {
      const src = join(dir, name);
      await writeTree(src, { 'a.txt': 'alpha', 'sub/b.txt': 'beta' });
      const project = (await useEmulator().client().projects.create({ name, description: 'issue 52' })).objectIdentifier;
      const mirrored = await runFerry(['mirror', src, '--project', project, '--state', join(dir, `${name}.sqlite`), '--wait'], useEmulator().env());
      expect(mirrored.code, mirrored.stderr).toBe(0);
      return project;
    };
    const [first, second] = [await sourceProject('refused-json'), await sourceProject('refused-text')];
    const migrate = (project: string, extra: string[]) =>
      runFerry(['migrate', '--from', from.name, '--to', to.name, '--projects', project, '--state', join(dir, 'g.sqlite'), '--wait', '--timeout', '60s', ...extra], { FERRY_CONFIG: config });
    emu.setCredits(to.name, 0);
    try {
      const r = await migrate(first, ['--json']);
      expect(r.code, r.stderr).toBe(1);
      const summary = onlyJson(r) as Summary & { projects: { target: string; processing: Summary['processing'] }[] };
      expect(summary.status).toBe('failed');
      expect(summary.counts).toMatchObject({ copied: 3, failed: 0 });
      expect(summary.processing).toEqual({ documents: 2, completed: 0, refused: 2, processing: 0, failedReasonSummary: { insufficientCredits: 2 }, timedOut: false, waited: true });
      expect(summary.projects[0]!.processing).toMatchObject({ refused: 2, waited: true });
      expect(summary.errors.map((e) => e.key).sort()).toEqual(['refused-json/a.txt', 'refused-json/sub/b.txt']);
      expect(summary.errors[0]!.error).toMatch(/^refused by the service's processing: insufficientCredits \(/);
      // The report the summary points to, on the target's profile, from any store.
      const target = summary.projects[0]!.target;
      const report = onlyJson(await runFerry(['-p', to.name, 'report', '--project', target, '--upload', summary.uploadIdentifier, '--state', join(dir, 'r.sqlite'), '--json'], { FERRY_CONFIG: config })) as { report: { totals: Record<string, number> } };
      expect(report.report.totals).toMatchObject({ files: 2, failed: 2 });

      // In text: the refusals added up, and the project's line names that report.
      const text = await migrate(second, []);
      expect(text.code, text.stderr).toBe(1);
      expect(text.stdout).toContain("processed: 0 indexed, 2 refused (insufficientCredits 2); each project's line below names the report that explains them");
      expect(text.stdout).toMatch(new RegExp(`processed on the target: 0 indexed, 2 refused \\(insufficientCredits 2\\); \`ferry -p ${to.name} report --project [0-9a-f-]{36} --upload [0-9a-f-]{36}\``));
      expect(text.stdout).toContain("refused-text/sub/b.txt: refused by the service's processing: insufficientCredits");
    } finally {
      emu.setCredits(to.name, 1_000_000);
    }
  });
});

describe('a wait that runs out, and no wait at all', () => {
  const slow = useService({ processing: { minDelayMs: 60_000, maxDelayMs: 61_000, seed: 1 } });

  it('mirror --wait --timeout 1s: exit 5, status timeout, the documents still processing counted and the next command named', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-processing-slow-'));
    await writeTree(join(dir, 'share'), { 'a.txt': 'a', 'b.txt': 'b' });
    const project = (await slow().client().projects.create({ name: 'slow processing', description: 'issue 52' })).objectIdentifier;
    const r = await runFerry(['mirror', join(dir, 'share'), '--project', project, '--state', join(dir, 's.sqlite'), '--wait', '--timeout', '1s', '--json'], slow().env());
    expect(r.code, r.stderr).toBe(5);
    const summary = onlyJson(r) as Summary & { problems: { key: string; reason: string }[] };
    expect(summary.status).toBe('timeout');
    expect(summary.processing).toMatchObject({ documents: 2, processing: 2, refused: 0, timedOut: true });
    expect(summary.problems).toContainEqual({ key: '(processing)', reason: expect.stringContaining(`ferry watch --run ${summary.runId}`) });
  });

  it('without --wait, a refusal already made is counted once, with its reason, and the parts add up to the documents', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-processing-refused-early-'));
    // An empty file: the service refuses it (badFile) while the others are still processing.
    await writeTree(join(dir, 'share'), { 'a.txt': 'a', 'b.txt': 'b', 'c.txt': 'c', 'empty.txt': '' });
    const project = (await slow().client().projects.create({ name: 'refused early', description: 'issue 77' })).objectIdentifier;
    const r = await runFerry(['mirror', join(dir, 'share'), '--project', project, '--state', join(dir, 's.sqlite'), '--json'], slow().env());
    expect(r.code, r.stderr).toBe(0);
    const p = (onlyJson(r) as Summary).processing!;
    expect(p.documents).toBe(4);
    expect(p.completed + p.refused + p.processing).toBe(p.documents);
    expect(Object.values(p.failedReasonSummary).reduce((n, c) => n + c, 0)).toBe(p.refused);
  });

  it('without --wait the summary counts what is still being processed and names the commands; the exit code is the transfer\'s', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-processing-nowait-'));
    await writeTree(join(dir, 'share'), { 'a.txt': 'a', 'b.txt': 'b', 'c.txt': 'c' });
    const project = (await slow().client().projects.create({ name: 'no wait', description: 'issue 52' })).objectIdentifier;
    const json = await runFerry(['mirror', join(dir, 'share'), '--project', project, '--state', join(dir, 's.sqlite'), '--json'], slow().env());
    expect(json.code, json.stderr).toBe(0);
    expect((onlyJson(json) as Summary).processing).toEqual({ documents: 3, completed: 0, refused: 0, processing: 3, failedReasonSummary: {}, timedOut: false, waited: false });
    await writeTree(join(dir, 'share'), { 'd.txt': 'd' });
    const text = await runFerry(['mirror', join(dir, 'share'), '--project', project, '--state', join(dir, 's.sqlite')], slow().env());
    expect(text.code).toBe(0);
    // The commands it names open the store the run was recorded in.
    expect(text.stdout).toContain(`processing: 1 of the 1 uploaded still being processed, 0 refused so far; \`ferry watch --run 2 --state ${join(dir, 's.sqlite')}\` waits for them`);
  });
});
