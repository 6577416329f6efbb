// Tarballs as users bring them, made by GNU tar itself (ustar, GNU long names, PAX, gzip), and
// hostile ones written header by header with tar-stream: mirrored by `ferry` as a child process
// into the emulator over loopback, checked with `ferry check`, refused whole where one entry is bad.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { link, mkdir, mkdtemp, readdir, readFile, rename, symlink, truncate, writeFile, stat } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { once } from 'node:events';
import { gzipSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import tar from 'tar-stream';
import { remoteFiles, remoteFolders, startService, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

type Summary = { counts: Record<string, number>; errors?: { key: string; error: string }[]; problems?: { key: string; reason: string }[]; error?: string };

const LONG = `${'a-folder-with-a-long-name-'.repeat(4)}/${'and-a-file-with-a-longer-name-still-'.repeat(3)}.txt`;

/** A tree with what tarballs carry: long and non-ASCII names, a symbolic link, a hard link. */
async function tree(dir: string): Promise<string> {
  const root = join(dir, 'export');
  await mkdir(join(root, 'Größe', '日本語'), { recursive: true });
  await mkdir(join(root, LONG.split('/')[0] as string), { recursive: true });
  await writeFile(join(root, 'Größe', 'Übersicht.docx'), 'overview');
  await writeFile(join(root, 'Größe', '日本語', '資料.txt'), 'shiryou');
  await writeFile(join(root, LONG), 'long');
  await writeFile(join(root, 'dup.txt'), 'one');
  await symlink('dup.txt', join(root, 'link-to-dup'));
  await link(join(root, 'Größe', 'Übersicht.docx'), join(root, 'hard-link.docx'));
  await mkdir(join(root, 'empty'));
  return root;
}

/** GNU tar in `format`, the path dup.txt appended a second time with other content (tar -r), then gzip if asked. */
async function gnuTar(dir: string, format: 'gnu' | 'pax' | 'ustar', gzip: boolean): Promise<string> {
  const root = await tree(dir);
  const file = join(dir, `export-${format}.tar`);
  const env = { ...process.env, LC_ALL: 'C.UTF-8' };
  // ustar holds names of at most 100 bytes after a prefix of 155: GNU tar refuses the long one, so it is left out there.
  execFileSync('tar', [`--format=${format}`, '-cf', file, ...(format === 'ustar' ? ['--exclude=a-folder-with-*'] : []), '-C', root, '.'], { env });
  await writeFile(join(root, 'dup.txt'), 'second version');
  execFileSync('tar', [`--format=${format}`, '-rf', file, '-C', root, './dup.txt'], { env });
  if (!gzip) return file;
  await writeFile(`${file}.gz`, gzipSync(await readFile(file)));
  return `${file}.gz`;
}

async function newProject(label: string): Promise<string> {
  return (await service.client().projects.create({ name: `tar ${label}`, description: 'archives issue' })).objectIdentifier;
}

function ferry(args: string[], dir: string) {
  return runFerry([...args, '--json'], service.env()).then((r) => ({ ...r, dir }));
}

describe('tar archives as sources', () => {
  it.each([
    ['GNU tar, GNU long names, uncompressed', 'gnu', false],
    ['GNU tar, PAX, gzip-compressed', 'pax', true],
    ['GNU tar, ustar, gzip-compressed, named .tgz', 'ustar', true],
  ] as const)('%s: long and non-ASCII names carried, links skipped, the later of a path twice, a rerun uploads 0, check clean', async (_label, format, gz) => {
    const dir = await mkdtemp(join(tmpdir(), `ferry-tar-${format}-`));
    let archive = await gnuTar(dir, format, gz);
    if (format === 'ustar') {
      const tgz = archive.replace(/\.tar\.gz$/, '.tgz');
      await rename(archive, tgz);
      archive = tgz;
    }
    const project = await newProject(format);
    const state = join(dir, 'state.sqlite');
    const first = await ferry(['mirror', archive, '--project', project, '--state', state], dir);
    const summary = onlyJson(first) as Summary;
    expect(first.code, first.stderr).toBe(0);
    const files = await remoteFiles(service.client(), project);
    const expected = ['/Größe/Übersicht.docx', '/Größe/日本語/資料.txt', '/dup.txt', '/hard-link.docx', ...(format === 'ustar' ? [] : [`/${LONG}`])].sort();
    expect(files.map((d) => d.path).sort()).toEqual(expected);
    // The later entry of dup.txt is the file; the earlier is a skipped item with its reason.
    expect(files.find((d) => d.path === '/dup.txt')?.size).toBe('second version'.length);
    expect(summary.problems).toEqual(expect.arrayContaining([
      { key: 'dup.txt', reason: expect.stringContaining('skipped: the archive holds this path more than once') },
      { key: 'link-to-dup', reason: expect.stringContaining('symbolic link') },
    ]));
    // A hard link is carried as a copy of its file (as tar extracts it): whichever path tar stored as the link.
    const copies = files.filter((d) => d.path === '/hard-link.docx' || d.path === '/Größe/Übersicht.docx');
    expect(copies.map((d) => d.size)).toEqual([8, 8]);
    const { discovered, uploaded, reconciled, skipped, failed } = summary.counts as Record<string, number>;
    expect(discovered).toBe((uploaded as number) + (reconciled as number) + (skipped as number) + (failed as number));
    expect(summary.counts).toMatchObject({ uploaded: expected.length, skipped: 2, failed: 0 });
    expect((await remoteFolders(service.client(), project)).sort()).toEqual(expect.arrayContaining(['/empty', '/Größe', '/Größe/日本語']));

    const again = onlyJson(await ferry(['mirror', archive, '--project', project, '--state', state], dir)) as Summary;
    expect(again.counts).toMatchObject({ uploaded: 0, failed: 0 });
    // A fresh store (another machine, a new container) finds everything there and sends nothing.
    const fresh = onlyJson(await ferry(['mirror', archive, '--project', project, '--state', join(dir, 'fresh.sqlite')], dir)) as Summary;
    expect(fresh.counts).toMatchObject({ uploaded: 0, failed: 0 });
    const check = await ferry(['check', archive, '--project', project], dir);
    expect(check.code, check.stdout + check.stderr).toBe(0);
    expect(onlyJson(check)).toMatchObject({ matching: expected.length, differenceCount: 0 });
  });

  it('a gzip-compressed tar under 429, 503 and dropped connections: every file once, the content of each exact', async () => {
    const faulty = await startService({ faults: '429=0.1,503=0.1,reset-after=0.05,seed=11' });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'ferry-tar-faults-'));
      const pack = tar.pack();
      const out = createWriteStream(join(dir, 'many.tar'));
      pack.pipe(out);
      const sizes = new Map<string, number>();
      for (let i = 0; i < 300; i++) {
        // Sizes around the cursor's kept-entry bound too: small, and one of 5 MiB in every fifty.
        const size = i % 50 === 7 ? 5 * 1024 * 1024 : 100 + i;
        const name = `d${i % 7}/f${i}.bin`;
        sizes.set(`/${name}`, size);
        pack.entry({ name, size }, randomBytes(size));
      }
      pack.finalize();
      await once(out, 'close');
      await writeFile(join(dir, 'many.tar.gz'), gzipSync(await readFile(join(dir, 'many.tar'))));
      const project = (await faulty.client().projects.create({ name: 'tar faults', description: 'x' })).objectIdentifier;
      const r = await runFerry(['mirror', join(dir, 'many.tar.gz'), '--project', project, '--state', join(dir, 's.sqlite'), '--json'], faulty.env());
      expect(r.code, r.stderr).toBe(0);
      const files = await remoteFiles(faulty.client(), project);
      expect(files.length).toBe(300);
      expect(new Set(files.map((d) => d.path)).size).toBe(300);
      for (const d of files) expect(d.size, d.path).toBe(sizes.get(d.path));
    } finally {
      await faulty.close();
    }
  });

  it('kill -9 in the middle of a tar.gz mirror: the next run (its leftover list swept) ends with every path once', async () => {
    const slow = await startService({ faults: 'latency=15' });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'ferry-tar-kill-'));
      const pack = tar.pack();
      const out = createWriteStream(join(dir, 'k.tar'));
      pack.pipe(out);
      for (let i = 0; i < 200; i++) pack.entry({ name: `k${i % 4}/f${i}.txt` }, `file ${i}`);
      pack.finalize();
      await once(out, 'close');
      const archive = join(dir, 'k.tar.gz');
      await writeFile(archive, gzipSync(await readFile(join(dir, 'k.tar'))));
      const project = (await slow.client().projects.create({ name: 'tar kill', description: 'x' })).objectIdentifier;
      const args = ['mirror', archive, '--project', project, '--state', join(dir, 's.sqlite'), '--concurrency', '2', '--json'];
      let pid = 0;
      const killed = await runFerry(args, slow.env(), (child) => {
        pid = child.pid as number;
        const poll = setInterval(() => {
          void remoteFiles(slow.client(), project).then((docs) => {
            if (docs.length >= 10) {
              clearInterval(poll);
              child.kill('SIGKILL');
            }
          }, () => undefined);
        }, 50);
        child.on('exit', () => clearInterval(poll));
      });
      expect(killed.code).toBeNull();
      const left = (await readdir(tmpdir())).filter((n) => n.startsWith(`ferry-tar-${pid}-`));
      expect(left.length).toBe(1);
      const again = await runFerry(args, slow.env());
      expect(again.code, again.stderr).toBe(0);
      expect((await readdir(tmpdir())).filter((n) => n.startsWith(`ferry-tar-${pid}-`))).toEqual([]);
      const paths = (await remoteFiles(slow.client(), project)).map((d) => d.path);
      expect(paths.length).toBe(200);
      expect(new Set(paths).size).toBe(200);
    } finally {
      await slow.close();
    }
  });

  describe('refused whole: exit 2, nothing created, nothing written', () => {
    async function hostile(label: string, write: (pack: tar.Pack) => void, gz = false): Promise<{ code: number | null; error: string; project: string }> {
      const dir = await mkdtemp(join(tmpdir(), `ferry-tar-hostile-${label}-`));
      const pack = tar.pack();
      const chunks: Buffer[] = [];
      pack.on('data', (c: Buffer) => chunks.push(c));
      const ended = once(pack, 'end');
      pack.entry({ name: 'fine.txt' }, 'fine');
      write(pack);
      pack.finalize();
      await ended;
      const bytes = Buffer.concat(chunks);
      const file = join(dir, gz ? 'hostile.tar.gz' : 'hostile.tar');
      await writeFile(file, gz ? gzipSync(bytes) : bytes);
      const project = await newProject(`hostile ${label}`);
      const r = await ferry(['mirror', file, '--project', project, '--state', join(dir, 's.sqlite'), '--to', 'Inbox'], dir);
      expect(await remoteFiles(service.client(), project)).toEqual([]);
      expect(await remoteFolders(service.client(), project)).toEqual([]);
      return { code: r.code, error: String((onlyJson(r) as Summary).error), project };
    }

    it('a path climbing out with ../', async () => {
      const r = await hostile('climb', (p) => p.entry({ name: 'docs/../../evil.txt' }, 'evil'));
      expect(r.code).toBe(2);
      expect(r.error).toContain('entry "docs/../../evil.txt" climbs out of the archive with ".."');
    });

    it('an absolute path', async () => {
      const r = await hostile('absolute', (p) => p.entry({ name: '/etc/cron.d/evil' }, 'evil'), true);
      expect(r.code).toBe(2);
      expect(r.error).toContain('is an absolute path');
    });

    it('a device file', async () => {
      const r = await hostile('device', (p) => p.entry({ name: 'dev/null-copy', type: 'character-device', devmajor: 1, devminor: 3 }));
      expect(r.code).toBe(2);
      expect(r.error).toContain('is a character device');
    });

    it('a gzip bomb: zeros expanding past the ratio', async () => {
      const r = await hostile('bomb', (p) => p.entry({ name: 'zeros.bin', size: 40 * 1024 * 1024 }, Buffer.alloc(40 * 1024 * 1024)), true);
      expect(r.code).toBe(2);
      expect(r.error).toMatch(/expands \d+-fold \(limit 200\), which looks like a gzip bomb/);
    });

    it('a truncated tar.gz: refused whole (not the entries before the damage), the damage named', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'ferry-tar-cut-'));
      const archive = await gnuTar(dir, 'pax', true);
      await truncate(archive, Math.floor((await stat(archive)).size / 2));
      const project = await newProject('truncated');
      const r = await ferry(['mirror', archive, '--project', project, '--state', join(dir, 's.sqlite')], dir);
      expect(r.code).toBe(2);
      expect((onlyJson(r) as Summary).error).toMatch(/is truncated or damaged after \d+ entries .*the archive was refused whole and nothing was uploaded/);
      expect(await remoteFiles(service.client(), project)).toEqual([]);
      expect(await remoteFolders(service.client(), project)).toEqual([]);
    });

    it('a gzip that holds no tar, and a tar cut inside its first header', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'ferry-tar-notar-'));
      await writeFile(join(dir, 'notes.txt.gz'), gzipSync('just some notes\n'.repeat(100)));
      const r = await ferry(['mirror', join(dir, 'notes.txt.gz'), '--project', service.project, '--state', join(dir, 's.sqlite')], dir);
      expect(r.code).toBe(2);
      expect((onlyJson(r) as Summary).error).toContain('is gzip-compressed, but what it holds is not a tar archive');
      await writeFile(join(dir, 'cut.tar'), Buffer.alloc(100, 0x41));
      const cut = await ferry(['mirror', join(dir, 'cut.tar'), '--project', service.project, '--state', join(dir, 's.sqlite')], dir);
      expect(cut.code).toBe(2);
      expect((onlyJson(cut) as Summary).error).toContain('is not a tar archive');
    });
  });

  it('the dry run and check read a tar too, and --archive-encoding decodes its legacy names', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-tar-dry-'));
    const pack = tar.pack();
    const chunks: Buffer[] = [];
    pack.on('data', (c: Buffer) => chunks.push(c));
    const ended = once(pack, 'end');
    pack.entry({ name: 'ascii.txt' }, 'a');
    pack.entry({ name: 'CafX.txt' }, 'b');
    pack.finalize();
    await ended;
    const archive = join(dir, 'legacy.tar');
    // A name written in cp1252 by an old Windows tool: the byte é is 0xE9, put in the header by hand.
    await writeFile(archive, patchTarName(Buffer.concat(chunks), 'CafX.txt', Buffer.from([0x43, 0x61, 0x66, 0xe9, 0x2e, 0x74, 0x78, 0x74])));
    const project = await newProject('dry');
    const dry = await runFerry(['mirror', archive, '--project', project, '--state', join(dir, 's.sqlite'), '--dry-run'], service.env());
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('upload, new: ascii.txt');
    expect(dry.stdout).toMatch(/problem: Caf\\xe9\.txt: .*--archive-encoding.*windows-1252: Café\.txt/);
    const said = await ferry(['mirror', archive, '--project', project, '--state', join(dir, 's.sqlite'), '--archive-encoding', 'windows-1252'], dir);
    expect(said.code, said.stderr).toBe(0);
    expect((await remoteFiles(service.client(), project)).map((d) => d.path).sort()).toEqual(['/Café.txt', '/ascii.txt']);
    const check = await ferry(['check', archive, '--project', project, '--archive-encoding', 'windows-1252'], dir);
    expect(check.code, check.stdout).toBe(0);
  });
});

/** The tar with a name's bytes replaced in its header (same length), the header's checksum made right again. */
function patchTarName(archive: Buffer, from: string, to: Buffer): Buffer {
  const out = Buffer.from(archive);
  const at = out.indexOf(Buffer.from(from));
  const header = at - (at % 512);
  to.copy(out, at);
  out.fill(0x20, header + 148, header + 156);
  let sum = 0;
  for (let i = header; i < header + 512; i++) sum += out[i] as number;
  out.write(`${sum.toString(8).padStart(6, '0')}\0 `, header + 148, 'latin1');
  return out;
}
