// --json decided once, before commander parses: an operand after `--` is no flag; and the Reply
// a command writes through once it has.
import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { answersInJson } from '../../src/cli/reply-mode.js';
import { Reply } from '../../src/cli/reply.js';

describe('text or JSON', () => {
  it('is JSON for --json among the flags, text for an operand after --', () => {
    expect(answersInJson(['mirror', 'src', '--project', 'p', '--json'])).toBe(true);
    expect(answersInJson(['--json', 'ls'])).toBe(true);
    expect(answersInJson(['mirror', '--project', 'p', '--', '--json'])).toBe(false);
    expect(answersInJson(['mirror', 'src', '--project', 'p'])).toBe(false);
  });
});

/** A Reply writing into two strings instead of stdout and stderr. */
function captured(json: boolean, statsIntervalMs?: number) {
  const said = { out: '', err: '' };
  const sink = (key: 'out' | 'err') => new Writable({ write: (chunk: Buffer, _enc, done) => ((said[key] += chunk.toString()), done()) });
  return { reply: new Reply(json, statsIntervalMs, sink('out'), sink('err')), said };
}

describe('the Reply a command writes through', () => {
  it('answers with its JSON body in the envelope, or with its text, never both', () => {
    const json = captured(true);
    json.reply.answer('succeeded', 0, { count: 2 }, () => 'two things');
    json.reply.text('said only in text');
    expect(JSON.parse(json.said.out)).toMatchObject({ status: 'succeeded', exitCode: 0, count: 2 });
    expect(json.said.out.split('\n').filter(Boolean)).toHaveLength(1);
    const text = captured(false);
    text.reply.answer('succeeded', 0, { count: 2 }, () => 'two things');
    text.reply.text('said only in text\n');
    text.reply.answer('succeeded', 0, {}, () => undefined);
    expect(text.said.out).toBe('two things\nsaid only in text\n');
  });

  it('says an error on stderr, escaped, and under --json in the envelope too', () => {
    const json = captured(true);
    json.reply.error(4, 'held by\u001b[31m run 7', { holder: 'x' }, 'locked');
    expect(json.said.err).toBe('ferry: held by\\x1b[31m run 7\n');
    expect(JSON.parse(json.said.out)).toMatchObject({ status: 'locked', exitCode: 4, error: 'held by\u001b[31m run 7', holder: 'x' });
    const text = captured(false);
    text.reply.error(4, 'held');
    expect(text.said).toEqual({ out: '', err: 'ferry: held\n' });
  });

  it('shows progress beside a text answer only, at the interval it was given', () => {
    expect(captured(false, 5_000).reply.display).toEqual({ progress: true, statsIntervalMs: 5_000 });
    expect(captured(true, 5_000).reply.display.progress).toBe(false);
    expect(captured(false).reply.listing({ where: '' })).toBeUndefined();
    const json = captured(true);
    const items = json.reply.listing({ where: 'p' });
    items?.item({ a: 1 });
    items?.end('succeeded', 0, { count: 1 });
    expect(JSON.parse(json.said.out)).toMatchObject({ where: 'p', items: [{ a: 1 }], count: 1, status: 'succeeded', exitCode: 0 });
  });
});
