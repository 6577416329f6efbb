// The words the command line adds to a lease refusal: the command that breaks it, quoted as a
// shell takes it back, made here and not by the backend that takes the lease.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { breakCommand, userMessage } from '../../src/cli/lease-words.js';
import { LeaseError } from '../../src/runner/lease.js';

describe('lease words', () => {
  it('names the project and the path, each as a shell reads it back', () => {
    expect(breakCommand({ project: '2b0c8a3e-1f7e-4c1e-9f0a-0c9e1d2b3a4f', path: 'contracts/2026' })).toBe('ferry lock break --project 2b0c8a3e-1f7e-4c1e-9f0a-0c9e1d2b3a4f --path contracts/2026');
    expect(breakCommand({ path: 'backup/Bob\'s share $HOME' })).toBe(`ferry lock break --path 'backup/Bob'\\''s share $HOME'`);
    // What the shell gives back is the path itself.
    const words = execFileSync('sh', ['-c', `printf '%s\\n' ${breakCommand({ path: "a b'c $x" }).slice('ferry lock break --path '.length)}`], { encoding: 'utf8' });
    expect(words).toBe("a b'c $x\n");
  });

  it('a client that may only read is pointed at ferry doctor by the command line, not by the lease', () => {
    const err = new LeaseError('project p', { code: 'denied', writesDenied: true, said: 'this client may read but not write' });
    expect(err.message).not.toContain('ferry doctor');
    expect(userMessage(err)).toMatch(/may read but not write.*\(ferry doctor says what a profile may do\)$/);
  });
});
