import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { runDemo } from '../../src/cli/actions/demo.js';

describe('npm run demo', () => {
  it('mirrors the sample tree and explains each failure the emulator reports', async () => {
    let text = '';
    const out = new Writable({
      write(chunk, _e, done) {
        text += String(chunk);
        done();
      },
    });
    expect(await runDemo(out as unknown as NodeJS.WritableStream)).toBe(0);
    expect(text).toContain('discovered 9  uploaded 9  skipped 0  failed 0');
    expect(text).toContain('processed: 5 indexed, 4 failed');
    expect(text).toMatch(/badFile \(2\)[\s\S]*inbox\/empty\.txt[\s\S]*scanned invoice\.pdf|badFile \(2\)[\s\S]*scanned invoice\.pdf[\s\S]*inbox\/empty\.txt/);
    expect(text).toContain('maliciousFile (1)');
    expect(text).toContain('unsupportedFileType (1)');
    expect(text).toContain('what to do: convert it');
  });
});
