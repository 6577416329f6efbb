// What a terminal shows: ferry in a pseudo-terminal of 80 columns (python3's pty, the window size
// set with TIOCSWINSZ), read back through a terminal emulator (@xterm/headless). The live line is
// redrawn many times and never passes the width; it shows the listing, then a bar with an ETA (a
// migration too, from its census); log lines and notices go above it; the summary is laid out for
// 80 columns, nothing of the live line is left on the screen, after Ctrl-C neither.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startService, writeServiceProfiles, writeTree, type Service } from '../helpers/service.js';
import { frames, inTerminal, screen, type ScreenLine } from '../helpers/pty.js';
import { mirror } from '../../jobs/mirror.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';

/** Anything of the live line: the listing, the bar, the rate, a verification under way. */
const LIVE = /listing: \d+ found|\] \d+%|files\/s|ETA \d|verify: project \d/;

/** The lines from the first that matches `start` on: what the summary wrote. */
function from(lines: ScreenLine[], start: RegExp): ScreenLine[] {
  const at = lines.findIndex((l) => start.test(l.text));
  expect(at, lines.map((l) => l.text).join('\n')).toBeGreaterThanOrEqual(0);
  return lines.slice(at);
}

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

describe('progress on a terminal', () => {
  it('never passes 80 columns, shows the listing, then a bar with a percentage and an ETA', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-pty-'));
    const files: Record<string, string> = {};
    for (let i = 0; i < 200; i++) files[`folder-with-a-rather-long-name-${i % 5}/file-${i}.txt`] = `content ${i}`;
    await writeTree(join(dir, 'src'), files);
    const project = (await service.client().projects.create({ name: 'pty', description: 'progress' })).objectIdentifier;
    service.emulator.setFaults('latency=8');
    try {
      const r = await inTerminal(80, ['mirror', join(dir, 'src'), '--project', project, '--state', join(dir, 's.sqlite'), '--concurrency', '2'], service.env()).done;
      expect(r.code, r.output.slice(-2000)).toBe(0);
      const all = frames(r.output);
      const live = all.filter((f) => /listing: \d+ found|\] \d+%/.test(f));
      expect(live.length).toBeGreaterThan(3);
      for (const f of all) expect(f.length, JSON.stringify(f)).toBeLessThanOrEqual(80);
      expect(live.some((f) => /\] \d+% {2}\d+\/200 files .*ETA \d/.test(f))).toBe(true);
      // The summary follows on lines of its own.
      expect(all.some((f) => f.startsWith('mirror run 1: succeeded'))).toBe(true);
    } finally {
      service.emulator.setFaults('');
    }
  });

  it('puts log lines above the live line: each on lines of its own, none holding live text', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-pty-log-'));
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i++) files[`f/${i}.txt`] = `content ${i}`;
    await writeTree(join(dir, 'src'), files);
    const project = (await service.client().projects.create({ name: 'pty log', description: '' })).objectIdentifier;
    service.emulator.setFaults('latency=8');
    try {
      const r = await inTerminal(80, ['-v', 'mirror', join(dir, 'src'), '--project', project, '--state', join(dir, 's.sqlite'), '--concurrency', '2'], { ...service.env(), FERRY_LOG_LEVEL: '' }).done;
      expect(r.code, r.output.slice(-2000)).toBe(0);
      expect(frames(r.output).some((f) => LIVE.test(f))).toBe(true);
      const lines = await screen(r.output, 80);
      const logged = lines.filter((l) => /\b(DEBUG|INFO)\b/.test(l.text));
      expect(logged.length).toBeGreaterThan(40);
      // Each log entry starts at the left edge with its time: none was written after live text.
      for (const l of logged) expect(l.text, l.text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] (DEBUG|INFO)/);
      for (const l of lines) expect(l.text, l.text).not.toMatch(LIVE);
      expect(lines.some((l) => l.text.startsWith('mirror run 1: succeeded'))).toBe(true);
    } finally {
      service.emulator.setFaults('');
    }
  });

  it('migrate: a bar and an ETA from its census, the source listed once, a live line while it verifies, a summary laid out for 80 columns', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-pty-migrate-'));
    const emu = service.emulator;
    const config = writeServiceProfiles(service, join(dir, 'profiles.yaml'));
    const files: Record<string, string> = {};
    for (let i = 0; i < 120; i++) files[`folder ${i % 3}/document-${i}.txt`] = `content ${i}`;
    await writeTree(join(dir, 'src'), files);
    const client = service.client();
    const project = (await client.projects.create({ name: 'A project whose name is long enough to matter at eighty columns', description: '' })).objectIdentifier;
    const store = new SqliteCheckpointStore(join(dir, 'source.sqlite'));
    try {
      expect((await mirror({ source: join(dir, 'src'), project }, { client, store })).counts.uploaded).toBe(120);
    } finally {
      store.close();
    }
    emu.setFaults('latency=6');
    try {
      const [a, b] = emu.tenants;
      const log = join(dir, 'ferry.log');
      const r = await inTerminal(80, ['--log-level', 'debug', '--log-file', log, 'migrate', '--from', a!.name, '--to', b!.name, '--projects', project, '--verify', '--concurrency', '2', '--state', join(dir, 'm.sqlite')], { ...service.env(), FERRY_CONFIG: config }).done;
      expect(r.code, r.output.slice(-2000)).toBe(0);
      // The source's documents are listed once by the copy and once by --verify, never for the bar
      // (its total comes from the project's analytics): 121 documents fit one page.
      const listings = (await readFile(log, 'utf8')).split('\n').filter((l) => l.includes('"msg":"response"') && l.includes(`"path":"/projects/${project}/documents"`) && l.includes('"method":"GET"'));
      expect(listings).toHaveLength(2);
      const all = frames(r.output);
      // 1 project + 120 documents, counted before they are all copied.
      expect(all.some((f) => /\] \d+% {2}\d+\/121 files {2}ETA \d/.test(f)), all.filter((f) => LIVE.test(f)).slice(-5).join('\n')).toBe(true);
      expect(all.some((f) => /^verify: project \d\/1 {2}\d+ documents/.test(f))).toBe(true);
      for (const f of all) expect(f.length, JSON.stringify(f)).toBeLessThanOrEqual(80);
      const lines = await screen(r.output, 80);
      for (const l of lines) expect(l.text, l.text).not.toMatch(LIVE);
      const summary = from(lines, /^migrate run \d+: succeeded/);
      // Laid out for 80 columns: the terminal wrapped nothing, and both ids of the project line are whole.
      expect(summary.filter((l) => l.wrapped).map((l) => l.text)).toEqual([]);
      expect(summary.some((l) => l.text.includes(project))).toBe(true);
      expect(summary.map((l) => l.text.trim()).join(' ')).toMatch(/verify .* 0 differences/);
    } finally {
      emu.setFaults('');
    }
  });

  it('Ctrl-C: the notice on lines of its own, the summary after it, nothing of the live line left', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-pty-int-'));
    const files: Record<string, string> = {};
    for (let i = 0; i < 300; i++) files[`f/${i}.txt`] = `content ${i}`;
    await writeTree(join(dir, 'src'), files);
    const project = (await service.client().projects.create({ name: 'pty ctrl-c', description: '' })).objectIdentifier;
    service.emulator.setFaults('latency=20');
    try {
      const session = inTerminal(80, ['mirror', join(dir, 'src'), '--project', project, '--state', join(dir, 's.sqlite'), '--concurrency', '2'], service.env());
      await session.waitFor(/\] \d+% {2}([1-9]\d*)\/300 files/);
      session.type('\x03');
      const r = await session.done;
      expect(r.code).toBe(3);
      const lines = await screen(r.output, 80);
      for (const l of lines) expect(l.text, l.text).not.toMatch(LIVE);
      const notice = from(lines, /^ferry: SIGINT received: stopping/);
      // The notice is laid out for 80 columns too, and the summary follows it.
      expect(notice.filter((l) => l.wrapped)).toEqual([]);
      expect(notice.some((l) => /^mirror run \d+: interrupted/.test(l.text))).toBe(true);
      // The terminal is given back with line wrapping on.
      expect(r.output.lastIndexOf('\u001b[?7h')).toBeGreaterThan(r.output.lastIndexOf('\u001b[?7l'));
    } finally {
      service.emulator.setFaults('');
    }
  });
});
