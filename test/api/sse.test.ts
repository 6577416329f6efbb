import { describe, expect, it } from 'vitest';
import { parseSse } from '../../src/api/sse.js';
import { collect, json, useTestServer } from '../helpers/test-server.js';

const reply = { objectIdentifier: 'm2', text: 'Hallo Wörld ✓', isAssistant: true, modelIdentifier: 'mod' };
const wire =
  'event: delta\ndata: {"text":"Hallo "}\n\n' +
  ': a comment line\n' +
  'event: delta\ndata: {"text":"Wörld ✓"}\n\n' +
  `event: message\ndata: ${JSON.stringify(reply)}\n\n` +
  'event: done\ndata: [DONE]\n\n';

async function* chunks(bytes: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

describe('SSE parsing', () => {
  it('yields the same events however the bytes are split, including inside UTF-8 characters', async () => {
    const bytes = Buffer.from(wire, 'utf8');
    const whole = await collect(parseSse(chunks(bytes, bytes.length)));
    expect(whole.map((e) => e.event)).toEqual(['delta', 'delta', 'message', 'done']);
    expect(JSON.parse(whole[1]!.data).text).toBe('Wörld ✓');
    for (const size of [1, 2, 3, 5, 7, 13]) {
      expect(await collect(parseSse(chunks(bytes, size)))).toEqual(whole);
    }
  });

  it('joins multi-line data and defaults the event name to message', async () => {
    const events = await collect(parseSse(chunks(Buffer.from('data: line one\ndata: line two\n\n'), 4)));
    expect(events).toEqual([{ event: 'message', data: 'line one\nline two', id: undefined }]);
  });
});

describe('message streaming', () => {
  const t = useTestServer();
  const chat = { projectIdentifier: 'p1', assistantIdentifier: 'a1' };
  const path = '/projects/p1/assistants/a1/messages';

  it('streams events written in small pieces over HTTP, then gives the final Message', async () => {
    t.server.handle('POST', path, async ({ res, body }) => {
      const req = JSON.parse((await body()).toString());
      expect(req.stream).toBe(true);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const bytes = Buffer.from(wire);
      for (let i = 0; i < bytes.length; i += 9) {
        res.write(bytes.subarray(i, i + 9));
        await new Promise((r) => setImmediate(r));
      }
      res.end();
    });
    const stream = t.client.messages.stream(chat, { text: 'hi', modelIdentifier: 'mod' });
    const events = await collect(stream);
    expect(events.filter((e) => e.event === 'delta').map((e) => JSON.parse(e.data).text).join('')).toBe('Hallo Wörld ✓');
    expect(await stream.finalMessage()).toEqual(reply);
  });

  it('accepts a JSON answer to a streaming request', async () => {
    t.server.handle('POST', path, ({ res }) => json(res, 200, reply));
    const stream = t.client.messages.stream(chat, { text: 'hi', modelIdentifier: 'mod' });
    expect(await stream.finalMessage()).toEqual(reply);
  });

  it('sends stream false and returns the Message for a plain send', async () => {
    t.server.handle('POST', path, async ({ res, body }) => {
      expect(JSON.parse((await body()).toString()).stream).toBe(false);
      json(res, 200, reply);
    });
    expect(await t.client.messages.send(chat, { text: 'hi', modelIdentifier: 'mod' })).toEqual(reply);
  });
});
