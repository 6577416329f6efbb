// ferry loads undici's parts alone, not its index (src/api/undici.ts): each part must be the one
// the index exports, so that an undici that moves its files fails here rather than in a run; and
// the client, loaded as a ferry process loads it, must not load the index after all.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as undici from 'undici';
import { Agent, Dispatcher, EnvHttpProxyAgent, errors, request } from '../../src/api/undici.js';

describe("undici's parts, loaded alone", () => {
  it('are the index\'s own', () => {
    expect(Agent).toBe(undici.Agent);
    expect(EnvHttpProxyAgent).toBe(undici.EnvHttpProxyAgent);
    expect(Dispatcher).toBe(undici.Dispatcher);
    expect(errors).toBe(undici.errors);
    expect(typeof request).toBe('function');
    // A dispatcher's own API methods, as the index gives them (a proxy's tunnel is a connect).
    expect(typeof (Dispatcher.prototype as unknown as { connect?: unknown }).connect).toBe('function');
  });

  it('the built client loads them and never the index', () => {
    const client = fileURLToPath(new URL('../../dist/src/api/index.js', import.meta.url));
    const script = `import(${JSON.stringify(client)}).then(() => { const cache = Object.keys(require.cache); console.log(JSON.stringify({ parts: cache.filter((k) => k.includes('/undici/')).length, index: cache.some((k) => /\\/undici\\/index\\.js$/.test(k)) })); })`;
    const seen = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as { parts: number; index: boolean };
    expect(seen.parts).toBeGreaterThan(10);
    expect(seen.index).toBe(false);
  });
});
