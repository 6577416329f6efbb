// Shared plumbing of the benchmarks: an emulator in its own process, temp trees, timing.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export async function startEmulatorProcess(dataDir, env = {}) {
  const child = spawn(process.execPath, [new URL('./workers/emulator.mjs', import.meta.url).pathname, ...(dataDir ? [dataDir] : [])], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const [line] = await once(createInterface({ input: child.stdout }), 'line');
  const description = JSON.parse(line);
  return {
    ...description,
    project: description.tenants[0].assistants[0].projectIdentifier,
    credentials: { clientId: description.tenants[0].clientId, clientSecret: description.tenants[0].clientSecret, audience: description.audience },
    address: { baseUrl: description.baseUrl, settingsUrl: description.settingsUrl, authUrl: description.authUrl },
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
