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
    // The counts agree from line to line: 9 files, 9 uploaded, 5 + 4 processed.
    expect(text).toContain('the sample: 9 files in 6 folders (one of them empty)');
    expect(text).toContain('discovered 9  uploaded 9  unchanged 0  skipped 0  failed 0');
    expect(text).toContain('folders: 7 created');
    expect(text).toContain('the service took all 9 files, in 7 new folders (Demo and the sample\'s 6)');
    expect(text).toContain('processed: 5 of 9 indexed, 4 refused by processing');
    // Its promise shown, not only said: the second run on the same store uploads nothing.
    expect(text).toMatch(/mirror run 2: nothing to do, all 9 entries already in place/);
    expect(text).toContain('nothing was uploaded twice: run 2 uploaded 0');
    expect(text).toMatch(/badFile \(2\)[\s\S]*inbox\/empty\.txt[\s\S]*scanned invoice\.pdf|badFile \(2\)[\s\S]*scanned invoice\.pdf[\s\S]*inbox\/empty\.txt/);
    expect(text).toContain('maliciousFile (1)');
    expect(text).toContain('unsupportedFileType (1)');
    expect(text).toContain('what to do: convert it');
  });
});
