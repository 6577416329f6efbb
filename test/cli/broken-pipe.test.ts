// `ferry jobs list | head -1`: the reader leaves after one line. ferry stops quietly (exit 0),
// without a stack trace on stderr.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { FERRY_BIN } from '../helpers/cli.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';

describe('a reader that closes the pipe early', () => {
  it('ends ferry with exit 0 and nothing on stderr', async () => {
    const state = join(await mkdtemp(join(tmpdir(), 'ferry-epipe-')), 'state.sqlite');
    const store = new SqliteCheckpointStore(state);
    // Enough lines that the output outgrows the pipe's buffer after the reader has gone.
    for (let i = 0; i < 3000; i++) store.finishRun(store.startRun({ job: 'mirror', jobKey: `k${i}`, params: {}, uploadId: 'u' }).id, 'succeeded');
    store.close();
    const child = spawn(process.execPath, [FERRY_BIN, 'jobs', 'list', '--state', state], { env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', FERRY_LOG_LEVEL: 'silent' } });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    // Like `head -1`: one chunk read, then the read end closed.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
