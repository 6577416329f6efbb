// Copies where people keep them: a project whose documents other clients named (a Mac, the web
// app: names legal on the service and on Linux) pulled onto real NTFS (ntfs-3g, windows_names)
// and exFAT mounts, and onto the machine's own disk; then a rerun, `check`, and a restore of the
// pulled folder into another tenant from a fresh store, which must give every original name back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { mirroredProject, remoteFiles, startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { mount, mountable, type FsKind, type Mounted } from '../helpers/filesystems.js';
import { NAMES_FILE } from '../../src/backends/names-record.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

const LONG = `${'n'.repeat(251)}.txt`; // 255 bytes

/** Documents a mirror from Linux gives the service (every name here is legal on ext4). */
const MIRRORED: Record<string, string> = {
  'Q3: review?.docx': 'q3 ascii',
  'Q3\uff1a review\uff1f.docx': 'q3 fullwidth look-alike',
  'x<y>.txt': 'angle',
  'pipe|.txt': 'pipe',
  'star*.txt': 'star',
  'quote".txt': 'quote',
  'back\\slash.txt': 'backslash',
  'CON.txt': 'con with extension',
  CON: 'con alone',
  'aux.log': 'aux with extension',
  NUL: 'nul alone',
  'COM1.csv': 'com1',
  'LPT\u00b9.txt': 'lpt superscript',
  'trail.': 'trailing dot',
  'trail ': 'trailing space',
  'A.txt': 'upper a',
  'a.txt': 'lower a',
  '\u201bquoted.txt': 'the quote character itself',
  [LONG]: 'two hundred and fifty-five bytes',
  'Client: Acme/brief.txt': 'in a folder with a colon',
  'aux/inside.txt': 'in a folder named aux',
  'Reports./r.txt': 'in a folder with a trailing dot',
};
/** Every device name Windows reserves, alone and with an extension (CON, NUL, aux.log are above; a document AUX beside the folder aux is a clash on the service, test/jobs/folder-case-clash.test.ts). */
for (const device of ['PRN', ...[...'0123456789\u00b9\u00b2\u00b3'].flatMap((d) => [`COM${d}`, `LPT${d}`])]) {
  MIRRORED[device] ??= `${device} alone`;
  MIRRORED[`${device.toLowerCase()}.txt`] ??= `${device} with an extension`;
}

/** Named through the API as the web app would: control characters cannot come from a mirror. */
const UPLOADED: Record<string, string> = {
  'bell\u0007.txt': 'bell',
  'tab\there.txt': 'tab',
};

async function seedProject(): Promise<{ project: string; expected: Map<string, string> }> {
  const client = service.client();
  const project = (await client.projects.create({ name: `copies ${randomUUID().slice(0, 8)}`, description: 'names other clients gave' })).objectIdentifier;
  const src = await mkdtemp(join(tmpdir(), 'ferry-copies-src-'));
  await writeTree(src, MIRRORED);
  const seeded = await runFerry(['mirror', src, '--project', project, '--state', join(src, '..', `${randomUUID()}.sqlite`), '--json'], service.env());
  expect(seeded.code, seeded.stdout + seeded.stderr).toBe(0);
  const batch = randomUUID();
  for (const [name, body] of Object.entries(UPLOADED)) {
    const doc = await client.documents.upload(project, { open: () => Readable.from([Buffer.from(body)]), size: Buffer.byteLength(body), filename: name }, { documentUploadIdentifier: batch });
    expect(doc.name).toBe(name);
  }
  return { project, expected: new Map(Object.entries({ ...MIRRORED, ...UPLOADED })) };
}

/** Every file under `root` but ferry's record of names: relative path -> content. */
async function filesUnder(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (dir: string, prefix: string) => {
    for (const d of await readdir(dir, { withFileTypes: true })) {
      if (d.isDirectory()) await walk(join(dir, d.name), `${prefix}${d.name}/`);
      else if (`${prefix}${d.name}` !== NAMES_FILE) out.set(`${prefix}${d.name}`, await readFile(join(dir, d.name), 'utf8'));
    }
  };
  await walk(root, '');
  return out;
}

interface PullJson {
  counts: Record<string, number>;
  errors: { key: string; error: string }[];
  renamed: { key: string; local: string; why: string }[];
  localNames: { rules: string; how: string; caseInsensitive: boolean };
  drift?: { missing: number; changed: number };
  replacedLocally?: { count: number; files: { local: string; backup?: string }[] };
}

/** The round trip onto one destination folder: pull, rerun, check, restore into another tenant. */
async function roundTrip(out: string, expectRules: string, extra: string[] = []): Promise<PullJson> {
  const { project, expected } = await seedProject();
  const state = join(await mkdtemp(join(tmpdir(), 'ferry-copies-state-')), 'pull.sqlite');
  const first = await runFerry(['pull', project, out, '--state', state, '--json', ...extra], service.env());
  const summary = onlyJson(first) as unknown as PullJson;
  expect(first.code, JSON.stringify(summary.errors)).toBe(0);
  expect(summary.localNames.rules).toBe(expectRules);
  expect(summary.counts).toMatchObject({ discovered: expected.size, downloaded: expected.size, failed: 0 });
  for (const r of summary.renamed) expect(r.why.length).toBeGreaterThan(0);

  // Every document present once, by content (each content is unique).
  const onDisk = await filesUnder(out);
  expect([...onDisk.values()].sort()).toEqual([...expected.values()].sort());

  const again = await runFerry(['pull', project, out, '--state', state, '--json', ...extra], service.env());
  expect(again.code, again.stdout).toBe(0);
  expect((onlyJson(again) as unknown as PullJson).counts).toMatchObject({ downloaded: 0, failed: 0 });

  const check = await runFerry(['check', out, '--project', project, '--json'], service.env());
  expect(check.code, check.stdout + check.stderr).toBe(0);

  // The restore: another tenant, a fresh store; every original name and path, no extra document.
  const other = service.client({}, 1);
  const target = (await other.projects.create({ name: `restore ${randomUUID().slice(0, 8)}`, description: 'restored' })).objectIdentifier;
  const restore = await runFerry(['mirror', out, '--project', target, '--state', join(await mkdtemp(join(tmpdir(), 'ferry-restore-')), 'fresh.sqlite'), '--json'], service.env(1));
  const restored = onlyJson(restore) as { counts: Record<string, number>; errors: { key: string; error: string }[] };
  // Control characters cannot go up in an upload: each is a failed item that says so, never a document under another name.
  const carried = [...expected.keys()].filter((k) => !/[\u0000-\u001f]/.test(k));
  expect(restored.errors.map((e) => e.key).sort()).toEqual([...expected.keys()].filter((k) => /[\u0000-\u001f]/.test(k)).sort());
  for (const e of restored.errors) expect(e.error).toMatch(/control characters/);
  expect(restore.code).toBe(1);
  const docs = await remoteFiles(other, target);
  expect(docs.map((d) => d.path?.replace(/^\//, '')).sort()).toEqual(carried.sort());
  return summary;
}

/** A pulled file deleted and another changed by hand: named, fetched again, replaced when asked. */
async function drift(out: string): Promise<void> {
  const { project } = await seedProject();
  const state = join(await mkdtemp(join(tmpdir(), 'ferry-drift-state-')), 'pull.sqlite');
  const first = await runFerry(['pull', project, out, '--state', state, '--json'], service.env());
  expect(first.code, first.stdout).toBe(0);
  const summary = onlyJson(first) as unknown as PullJson;
  const localOf = (key: string) => summary.renamed.find((r) => r.key === key)?.local ?? key;
  const deleted = localOf('Client: Acme/brief.txt');
  const changed = localOf('x<y>.txt');
  await unlink(join(out, deleted));
  await writeFile(join(out, changed), 'edited by hand, longer than before');

  const second = await runFerry(['pull', project, out, '--state', state, '--json'], service.env());
  const s2 = onlyJson(second) as unknown as PullJson;
  expect(second.code).toBe(1);
  expect(s2.drift).toEqual(expect.objectContaining({ missing: 1, changed: 1 }));
  expect(s2.counts).toMatchObject({ downloaded: 1, failed: 1 });
  expect(s2.errors).toEqual([expect.objectContaining({ key: 'x<y>.txt', error: expect.stringMatching(/changed here since ferry wrote it/) })]);
  expect(await readFile(join(out, deleted), 'utf8')).toBe('in a folder with a colon');
  expect(await readFile(join(out, changed), 'utf8')).toBe('edited by hand, longer than before');

  const backup = await mkdtemp(join(tmpdir(), 'ferry-backup-'));
  const third = await runFerry(['pull', project, out, '--state', state, '--overwrite-changed', '--backup-dir', backup, '--json'], service.env());
  const s3 = onlyJson(third) as unknown as PullJson;
  expect(third.code, JSON.stringify(s3.errors)).toBe(0);
  expect(s3.replacedLocally?.count).toBe(1);
  expect(await readFile(join(out, changed), 'utf8')).toBe('angle');
  expect(await readFile(join(backup, changed), 'utf8')).toBe('edited by hand, longer than before');

  const fourth = await runFerry(['pull', project, out, '--state', state, '--json'], service.env());
  expect(fourth.code, fourth.stdout).toBe(0);
  expect((onlyJson(fourth) as unknown as PullJson).counts).toMatchObject({ downloaded: 0, failed: 0 });
}

describe('pull onto the machine\'s own disk', () => {
  it('writes names as they are (posix rules), and a restore gives them back', async () => {
    await roundTrip(join(await mkdtemp(join(tmpdir(), 'ferry-copies-ext4-')), 'out'), 'posix');
  });
  it('a pulled file deleted and another changed: fetched again, named, replaced when asked', async () => {
    await drift(join(await mkdtemp(join(tmpdir(), 'ferry-drift-ext4-')), 'out'));
  });
});

for (const kind of ['ntfs', 'exfat'] as FsKind[]) {
  describe(`pull onto ${kind === 'ntfs' ? 'NTFS (ntfs-3g -o windows_names)' : 'exFAT (exfat-fuse, loop device)'}`, () => {
    let refused: string | undefined;
    beforeAll(async () => {
      refused = await mountable(kind);
      if (refused && process.env.CI) throw new Error(refused);
    });
    const onMount = async (skip: (why: string) => void, work: (m: Mounted) => Promise<void>) => {
      if (refused) return skip(refused);
      const m = await mount(kind);
      try {
        await work(m);
      } finally {
        await m.unmount();
      }
    };
    it('every document once, a rerun downloads 0, check is clean, a restore gives every original name', async (ctx) => {
      await onMount(ctx.skip, (m) => roundTrip(join(m.dir, 'copy'), 'windows'));
    });
    it('a pulled file deleted and another changed: fetched again, named, replaced when asked', async (ctx) => {
      await onMount(ctx.skip, (m) => drift(join(m.dir, 'copy')));
    });
    it('names the stated rules did not predict (posix on this drive) are refused by the file system, written with the strict rules, said, and restored', async (ctx) => {
      await onMount(ctx.skip, async (m) => {
        const summary = await roundTrip(join(m.dir, 'copy'), 'posix', ['--local-names', 'posix']);
        const refused = summary.renamed.filter((r) => /the file system refused/.test(r.why));
        expect(refused.map((r) => r.key)).toEqual(expect.arrayContaining(['Q3: review?.docx', 'x<y>.txt', 'Client: Acme/brief.txt']));
        for (const r of summary.renamed) expect(r.why).not.toMatch(/EINVAL|ENOENT.*internal|node:/);
      });
    });
    // Drained from the socket's own buffer (plain http), or written as undici's stream flows (a
    // bandwidth limit takes that path, as https and a proxy do): the same full disk either way.
    for (const [how, flags] of [['drained', []], ['streamed (--bwlimit)', ['--bwlimit', '1G']]] as const) {
      it(`a disk that fills mid-file is exit 2 naming it and the bytes still needed; no file under the name; freed, the next run continues (${how})`, async (ctx) => {
        if (refused) return ctx.skip(refused);
        const m = await mount(kind, 96);
        try {
          const MiB = 1024 * 1024;
          const content = randomBytes(48 * MiB);
          const dir = await mkdtemp(join(tmpdir(), 'ferry-full-'));
          const project = await mirroredProject(service.client(), join(dir, 'src'), { 'big.bin': content }, `disk full on ${kind}`);
          // What else is on the disk leaves room for about half of the file.
          const filler = join(m.dir, 'filler.bin');
          await writeFile(filler, Buffer.alloc(64 * MiB - (kind === 'ntfs' ? 8 * MiB : 0)));
          const out = join(m.dir, 'copy');
          const state = join(dir, 's.sqlite');
          const full = await runFerry(['pull', project, out, '--state', state, ...flags], service.env());
          expect(full.code, full.stderr).toBe(2);
          expect(full.stderr).toMatch(new RegExp(`the disk holding ${out.replace(/[/.]/g, '\\$&')} is full \\(ENOSPC\\): big\\.bin still needs \\d+ bytes`));
          const needs = Number(/still needs (\d+) bytes/.exec(full.stderr)![1]);
          expect(needs).toBeGreaterThan(0);
          expect(needs).toBeLessThan(content.length);
          const left = await readdir(out);
          expect(left).not.toContain('big.bin');
          expect(left.filter((n) => n.endsWith('.partial'))).toHaveLength(1);

          await rm(filler);
          const before = service.emulator.traffic().bytesSent;
          const again = onlyJson(await runFerry(['pull', project, out, '--state', state, '--json', ...flags], service.env()));
          expect(again).toMatchObject({ exitCode: 0, counts: { downloaded: 1, failed: 0 } });
          // Continued: what the first run kept is not sent again.
          expect(service.emulator.traffic().bytesSent - before).toBeLessThan(needs + 2 * MiB);
          expect(createHash('sha256').update(await readFile(join(out, 'big.bin'))).digest('hex')).toBe(createHash('sha256').update(content).digest('hex'));
          expect((await readdir(out)).filter((n) => n.endsWith('.partial'))).toEqual([]);
          await rm(dir, { recursive: true, force: true });
        } finally {
          await m.unmount();
        }
      });
    }
    it('a destination on a read-only mount is exit 2 before any download', async (ctx) => {
      if (refused) return ctx.skip(refused);
      const m = await mount(kind, 96, { readOnly: true });
      try {
        const r = await runFerry(['pull', service.project, join(m.dir, 'copy'), '--state', join(await mkdtemp(join(tmpdir(), 'ferry-ro-')), 's.sqlite')], service.env());
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toMatch(/read-only/);
        expect(await readdir(m.dir)).toEqual([]);
      } finally {
        await m.unmount();
      }
    });
  });
}

describe('a folder pulled before', () => {
  it('keeps the rules it was written by; a file put there under a name the record gives back is not uploaded', async () => {
    const { project } = await seedProject();
    const out = join(await mkdtemp(join(tmpdir(), 'ferry-recorded-')), 'out');
    const state = join(out, '..', 'pull.sqlite');
    const first = await runFerry(['pull', project, out, '--local-names', 'windows', '--state', state, '--json'], service.env());
    expect(first.code, first.stdout).toBe(0);
    // Without the flag, on a disk that takes every name: the record's rules, nothing downloaded again.
    const again = onlyJson(await runFerry(['pull', project, out, '--state', state, '--json'], service.env())) as unknown as PullJson;
    expect(again.localNames).toMatchObject({ rules: 'windows', how: 'recorded' });
    expect(again.counts).toMatchObject({ downloaded: 0, failed: 0 });

    await writeFile(join(out, 'CON.txt'), 'a file of my own');
    const target = (await service.client().projects.create({ name: 'restore beside', description: '' })).objectIdentifier;
    const r = await runFerry(['mirror', out, '--project', target, '--state', join(out, '..', 'restore.sqlite'), '--json'], service.env());
    const summary = onlyJson(r) as { errors: { key: string; error: string }[] };
    expect(summary.errors).toContainEqual({ key: 'CON.txt', error: expect.stringMatching(/the name the folder's \.ferry-names\.jsonl gives back to a pulled file.*rename it/) });
    const con = (await remoteFiles(service.client(), target)).filter((d) => d.path === '/CON.txt');
    expect(con).toHaveLength(1);
    expect(con[0]!.size).toBe(Buffer.byteLength('con with extension'));
  });
});

describe('bad input', () => {
  it('a record of names edited by hand: the restore uploads nothing under a name it is not sure of, and says which', async () => {
    const { project, expected } = await seedProject();
    const out = join(await mkdtemp(join(tmpdir(), 'ferry-damaged-')), 'out');
    const pulled = await runFerry(['pull', project, out, '--local-names', 'windows', '--state', join(out, '..', 'pull.sqlite'), '--json'], service.env());
    expect(pulled.code, pulled.stdout).toBe(0);
    const record = join(out, NAMES_FILE);
    const lines = (await readFile(record, 'utf8')).split('\n');
    // The third line (the second mapping) says another name: its sum no longer matches.
    const edited = JSON.parse(lines[2]!) as { local: string; name: string; sum: string };
    lines[2] = JSON.stringify({ ...edited, name: 'Invoice (forged).pdf' });
    await writeFile(record, lines.join('\n'));
    const target = (await service.client().projects.create({ name: 'restore damaged', description: '' })).objectIdentifier;
    const r = await runFerry(['mirror', out, '--project', target, '--state', join(out, '..', 'restore.sqlite'), '--json'], service.env());
    const summary = onlyJson(r) as { errors: { key: string; error: string }[]; problems: { key: string; reason: string }[] };
    expect(r.code).toBe(1);
    const unsure = summary.errors.filter((e) => /damaged from line 3/.test(e.error));
    expect(unsure.length).toBeGreaterThan(0);
    expect(unsure.map((e) => e.key)).toContain(edited.local);
    const names = (await remoteFiles(service.client(), target)).map((d) => d.path!.replace(/^\//, ''));
    // Every document made has a name the project had; none under a mapped or forged name.
    for (const n of names) expect(expected.has(n), n).toBe(true);
    expect(names).not.toContain('Invoice (forged).pdf');
    expect(summary.problems.some((p) => /damaged from line 3/.test(p.reason))).toBe(true);
  });
  it('--local-names with an unknown value is exit 2 listing the values', async () => {
    const r = await runFerry(['pull', service.project, join(tmpdir(), 'never'), '--local-names', 'dos'], service.env());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/auto, posix, windows/);
  });
  it('--backup-dir inside the pulled folder is exit 2', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-backup-inside-'));
    const r = await runFerry(['pull', service.project, dir, '--overwrite-changed', '--backup-dir', join(dir, 'old')], service.env());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/inside/);
    await rm(dir, { recursive: true, force: true });
  });
});
