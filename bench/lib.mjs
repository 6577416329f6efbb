// Shared plumbing of the benchmarks: an emulator in its own process, temp trees, timing.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync as writeFileSyncFs } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { cpus } from 'node:os';
import { promisify } from 'node:util';

/** Clock ticks per second, as /proc counts CPU time (USER_HZ: 100 on Linux nearly everywhere). */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Whether processes can be pinned to cores here (Linux's taskset, two cores or more); `what` is said when not. */
export async function canPin(what) {
  if (cpus().length < 2) return false;
  try {
    await promisify(execFile)('taskset', ['-p', String(process.pid)]);
    return true;
  } catch {
    console.error(`taskset is not available: ${what} is left out`);
    return false;
  }
}

export async function startEmulatorProcess(dataDir, env = {}) {
  const child = spawn(process.execPath, [new URL('./workers/emulator.mjs', import.meta.url).pathname, ...(dataDir ? [dataDir] : [])], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const description = JSON.parse((await lines.next()).value);
  return {
    ...description,
    project: description.tenants[0].assistants[0].projectIdentifier,
    credentials: { clientId: description.tenants[0].clientId, clientSecret: description.tenants[0].clientSecret, audience: description.audience },
    address: { baseUrl: description.baseUrl, settingsUrl: description.settingsUrl, authUrl: description.authUrl },
    pid: child.pid,
    /** Linux: the peak RSS (KiB) since the last reset, and a reset, to tell one step's peak from another's. */
    peakRssKiB() {
      const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      return m ? Number(m[1]) : 0;
    },
    /** Linux: the CPU time (user and system, ms) it has used so far, every thread, to a clock tick. */
    cpuMs() {
      const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) * (1000 / CLOCK_TICKS);
    },
    /** The requests it has been sent so far. */
    async requests() {
      child.kill('SIGUSR2');
      return JSON.parse((await lines.next()).value).requests;
    },
    resetPeakRss() {
      writeFileSyncFs(`/proc/${child.pid}/clear_refs`, '5');
    },
    async stop() {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** Writes `count` files of `size` bytes, 100 per folder. */
export async function makeTree(root, count, size) {
  const content = Buffer.alloc(size, 'x');
  for (let start = 0; start < count; start += 100) {
    const folder = join(root, `d${Math.floor(start / 10_000)}`, `f${Math.floor(start / 100)}`);
    await mkdir(folder, { recursive: true });
    const writes = [];
    for (let i = start; i < Math.min(count, start + 100); i++) writes.push(writeFile(join(folder, `file-${i}.txt`), content));
    await Promise.all(writes);
  }
}

export async function timed(fn) {
  const start = process.hrtime.bigint();
  const result = await fn();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, result };
}
