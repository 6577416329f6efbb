// --json decided once, before commander parses: an operand after `--` is no flag.
import { describe, expect, it } from 'vitest';
import { answersInJson } from '../../src/cli/reply-mode.js';

describe('text or JSON', () => {
  it('is JSON for --json among the flags, text for an operand after --', () => {
    expect(answersInJson(['mirror', 'src', '--project', 'p', '--json'])).toBe(true);
    expect(answersInJson(['--json', 'ls'])).toBe(true);
    expect(answersInJson(['mirror', '--project', 'p', '--', '--json'])).toBe(false);
    expect(answersInJson(['mirror', 'src', '--project', 'p'])).toBe(false);
  });
});
