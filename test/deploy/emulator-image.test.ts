// The emulator's image target (Dockerfile, `--target emulator`): no Docker engine runs where the
// tests do, so its parts are held here one by one: its command, and the HEALTHCHECK's script run
// against a real emulator, one without its control API, and a port where nothing listens.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatorHandle, startEmulator } from '../../src/emulator/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const health = `${root}deploy/image/emulator-health.mjs`;
/** The script's exit status and stderr (run asynchronously: the emulators answer from this process). */
const check = (url: string) =>
  new Promise<{ status: number; stderr: string }>((resolve) => {
    execFile(process.execPath, [health, url], { timeout: 30_000 }, (error, _stdout, stderr) => resolve({ status: error ? Number(error.code) : 0, stderr }));
  });

describe('the emulator image', () => {
  let on: EmulatorHandle;
  let off: EmulatorHandle;
  beforeAll(async () => {
    on = await startEmulator();
    off = await startEmulator({ control: false });
  });
  afterAll(async () => {
    await on.close();
    await off.close();
  });

  it('runs the emulator on 4010 with a HEALTHCHECK on the script it copies in', () => {
    const dockerfile = readFileSync(`${root}Dockerfile`, 'utf8');
    const target = dockerfile.slice(dockerfile.indexOf('AS emulator'));
    expect(target).toMatch(/^HEALTHCHECK .*CMD \["node", "\/opt\/ferry\/emulator-health\.mjs"\]$/m);
    expect(target).toMatch(/^CMD \["emulator", "--host", "0\.0\.0\.0", "--port", "4010"\]$/m);
    expect(target).toMatch(/^EXPOSE 4010$/m);
    expect(dockerfile).toMatch(/^COPY --from=build \/src\/deploy\/image\/emulator-health\.mjs \/opt\/ferry\/emulator-health\.mjs$/m);
    // The default target stays ferry itself: the last stage is the run stage, unchanged.
    expect(dockerfile.trimEnd().split('\n').pop()).toBe('FROM run');
    // The script defaults to the port the target's command names.
    expect(readFileSync(health, 'utf8')).toContain("'http://127.0.0.1:4010/_emulator/health'");
  });

  it('says healthy for a ready emulator and unhealthy otherwise', async () => {
    expect((await check(`${on.baseUrl}/_emulator/health`)).status).toBe(0);
    const noControl = await check(`${off.baseUrl}/_emulator/health`);
    expect(noControl.status).toBe(1);
    expect(noControl.stderr).toContain('404');
    // A port where nothing listens: taken, then freed.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = server.address() as { port: number };
        server.close(() => resolve(p));
      });
    });
    const down = await check(`http://127.0.0.1:${port}/_emulator/health`);
    expect(down.status).toBe(1);
    expect(down.stderr).toContain('ECONNREFUSED');
  });
});
