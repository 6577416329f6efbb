// `ferry doctor` against the emulator: a full client is ready, a read-only one is told what it lacks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { startService, type Service } from '../helpers/service.js';

const bin = fileURLToPath(new URL('../../bin/ferry.js', import.meta.url));
let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

async function doctor(env: Record<string, string>): Promise<{ code: number | null; report: { ok: boolean; checks: { name: string; ok: boolean; warning?: boolean; detail: string }[] } }> {
  const child = spawn(process.execPath, [bin, 'doctor', '--json'], { env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', FERRY_LOG_LEVEL: 'silent', ...env } });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  const [code] = await once(child, 'exit');
  return { code: code as number | null, report: JSON.parse(stdout) };
}

describe('ferry doctor against the emulator', () => {
  it('declares a full client ready, with the permissions its token grants', async () => {
    const { code, report } = await doctor(service.env());
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    expect(report.checks.find((c) => c.name === 'write permission')).toMatchObject({ ok: true, detail: 'granted (probed with a harmless call)' });
    expect(report.checks.find((c) => c.name === 'granted permissions')?.detail).toContain('write');
    expect(report.checks.find((c) => c.name === 'read call on settings host')?.detail).toMatch(/\d+ model\(s\)/);
  });

  it('warns that a read-only client cannot write', async () => {
    const t = service.emulator.tenants[0]!;
    const { code, report } = await doctor({ ...service.env(), FERRY_CLIENT_ID: t.readOnlyClientId, FERRY_CLIENT_SECRET: t.readOnlyClientSecret });
    expect(code).toBe(0);
    expect(report.checks.find((c) => c.name === 'write permission')).toMatchObject({ ok: true, warning: true });
    expect(report.checks.find((c) => c.name === 'write permission')!.detail).toContain('MISSING');
  });

  it('fails, naming the problem, when the audience is wrong', async () => {
    const { code, report } = await doctor({ ...service.env(), FERRY_AUDIENCE: 'https://wrong.example/v2' });
    expect(code).toBe(1);
    expect(report.checks.find((c) => c.name === 'token')).toMatchObject({ ok: false });
  });
});
