// What a terminal shows: `ferry mirror` in a pseudo-terminal of 80 columns (python3's pty, the
// window size set with TIOCSWINSZ). The live line is redrawn many times and never passes the
// width, so it never wraps; it shows the listing, then a bar with an ETA.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startService, writeTree, type Service } from '../helpers/service.js';
import { FERRY_BIN } from '../helpers/cli.js';

const PTY = `
import os, pty, sys, fcntl, termios, struct, select
cols = int(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 24, cols, 0, 0))
out = sys.stdout.buffer
while True:
    try:
        data = os.read(fd, 65536)
    except OSError:
        break
    if not data:
        break
    out.write(data)
out.flush()
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
`;

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

function inTerminal(cols: number, args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // The window size is set after the fork: the child waits a moment before it starts ferry.
    const child = spawn('python3', ['-c', PTY, String(cols), 'sh', '-c', `sleep 0.3; exec "$0" "$@"`, process.execPath, FERRY_BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', FERRY_LOG_LEVEL: 'silent', TERM: 'xterm', ...env },
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** What each redraw writes on the line: text between cursor moves, carriage returns and newlines. */
function frames(output: string): string[] {
  // eslint-disable-next-line no-control-regex
  return output.split(/\u001b\[[0-9;?]*[A-Za-z]|\u001b[78]|[\r\n]+/).filter((f) => f.trim() !== '');
}

describe('progress on a terminal', () => {
  it('never passes 80 columns, shows the listing, then a bar with a percentage and an ETA', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-pty-'));
    const files: Record<string, string> = {};
    for (let i = 0; i < 200; i++) files[`folder-with-a-rather-long-name-${i % 5}/file-${i}.txt`] = `content ${i}`;
    await writeTree(join(dir, 'src'), files);
    const project = (await service.client().projects.create({ name: 'pty', description: 'progress' })).objectIdentifier;
    service.emulator.setFaults('latency=8');
    try {
      const r = await inTerminal(80, ['mirror', join(dir, 'src'), '--project', project, '--state', join(dir, 's.sqlite'), '--concurrency', '2'], service.env());
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
});
