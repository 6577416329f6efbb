import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { FerryClient } from '../../src/api/index.js';
import { createLogger } from '../../src/log.js';
import { SECRET, clientOptionsFor, json, startTestServer } from '../helpers/test-server.js';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'trace', destination }) };
}

describe('logs', () => {
  it('never carry the client secret or any token, even at trace level', async () => {
    const server = await startTestServer();
    const { lines, logger } = capture();
    const client = new FerryClient({ ...clientOptionsFor(server), logger, retry: { baseDelayMs: 1 } });
    server.handle('GET', '/projects', ({ res, seen }) =>
      seen === 0 ? json(res, 503, { title: 'busy' }) : json(res, 200, { items: [], totalCount: 0 }),
    );
    server.handle('GET', '/projects/x', ({ res }) => json(res, 404, { title: 'Not Found' }));
    await client.projects.list().page(1);
    server.revoked.add(server.issued[0]!);
    await client.projects.list().page(1);
    await client.projects.get('x').catch((err: Error) => logger.error({ err }, 'call failed'));
    // Whatever a caller logs by mistake is redacted by key.
    logger.debug({ clientSecret: SECRET, token: server.issued[1], headers: { authorization: `Bearer ${server.issued[1]}` } }, 'careless');
    await client.close();
    await server.close();

    expect(lines.length).toBeGreaterThan(5);
    expect(server.issued).toHaveLength(2);
    const all = lines.join('\n');
    expect(all).not.toContain(SECRET);
    for (const token of server.issued) {
      expect(all).not.toContain(token);
      // Not even the signature part on its own.
      expect(all).not.toContain(token.split('.')[2]);
    }
    expect(all).toContain('[redacted]');
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('refuses an unknown level by name', () => {
    expect(() => createLogger({ level: 'loud' })).toThrow('unknown log level "loud"');
  });
});
