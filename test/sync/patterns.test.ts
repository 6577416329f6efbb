// One pattern syntax for every source (sync/patterns.ts), and the --filter-from rules.
import { describe, expect, it } from 'vitest';
import { pathFilter } from '../../src/sync/patterns.js';
import { parseFilterRules } from '../../src/sync/filter-rules.js';
import { settingsOf } from '../../src/settings/values.js';
import { OTHER_SETTINGS } from '../../src/settings/declared.js';

const PATHS = ['a.pdf', 'a.txt', '.hidden', 'docs/b.pdf', 'docs/b.txt', 'docs/deep/c.pdf', 'drafts/d.pdf', 'drafts/sub/e.pdf'];
const pick = (f: (k: string) => boolean) => PATHS.filter(f);

describe('path patterns', () => {
  it('takes everything without patterns, dot files included', () => {
    expect(pick(pathFilter({}))).toEqual(PATHS);
  });

  it('include matches the whole path: * stays in a folder, ** crosses folders', () => {
    expect(pick(pathFilter({ include: ['*.pdf'] }))).toEqual(['a.pdf']);
    expect(pick(pathFilter({ include: ['**/*.pdf'] }))).toEqual(['a.pdf', 'docs/b.pdf', 'docs/deep/c.pdf', 'drafts/d.pdf', 'drafts/sub/e.pdf']);
  });

  it('exclude leaves out a folder with all it holds', () => {
    expect(pick(pathFilter({ exclude: ['drafts'] }))).toEqual(['a.pdf', 'a.txt', '.hidden', 'docs/b.pdf', 'docs/b.txt', 'docs/deep/c.pdf']);
    expect(pick(pathFilter({ include: ['**/*.pdf'], exclude: ['docs/deep', '.*'] }))).toEqual(['a.pdf', 'docs/b.pdf', 'drafts/d.pdf', 'drafts/sub/e.pdf']);
  });

  it('filter rules: the first that matches decides, a path none matches is taken', () => {
    const rules = parseFilterRules('# keep the drafts of one folder only\n+ drafts/sub/**\n- drafts\n; and no text files\n- **/*.txt\n', 'rules');
    expect(pick(pathFilter({ rules }))).toEqual(['a.pdf', '.hidden', 'docs/b.pdf', 'docs/deep/c.pdf', 'drafts/sub/e.pdf']);
    // Take-only rules then a catch-all: an include list in filter form.
    expect(pick(pathFilter({ rules: parseFilterRules('+ **/*.pdf\n- **\n', 'rules') }))).toEqual(['a.pdf', 'docs/b.pdf', 'docs/deep/c.pdf', 'drafts/d.pdf', 'drafts/sub/e.pdf']);
  });

  it('judges hostile names like any other: line and paragraph separators, a newline, backslashes, brackets, percent signs', () => {
    // picomatch's `.` is a regular expression's; without the dotAll flag `**` never crossed a
    // U+2028, U+2029 or a newline, and such paths were left out by --include '**' without a word.
    const hostile = ['d\u2028x/f.txt', 'x/\u2029/y.txt', 'n\nl/f.txt', 'a\\b.txt', '[x]/y.txt', '%22.txt', '\ufeffbom.txt', 'e\udcff.txt'];
    expect(hostile.filter(pathFilter({ include: ['**'] }))).toEqual(hostile);
    expect(hostile.filter(pathFilter({ include: ['**/*.txt'] }))).toEqual(hostile);
    expect(hostile.filter(pathFilter({ exclude: ['**/y.txt', 'd*'] }))).toEqual(['n\nl/f.txt', 'a\\b.txt', '%22.txt', '\ufeffbom.txt', 'e\udcff.txt']);
    expect(hostile.filter(pathFilter({ rules: parseFilterRules('- x/*/y.txt\n+ **/f.txt\n- **\n', 'rules') }))).toEqual(['d\u2028x/f.txt', 'n\nl/f.txt']);
  });

  it('refuses a line that is not a rule, naming its number, a file with no rule, and rules beside --include', () => {
    expect(() => parseFilterRules('+ *.pdf\nkeep this\n', 'f.txt')).toThrow(/f\.txt, line 2: "keep this" is not a rule/);
    expect(() => parseFilterRules('# only comments\n\n', 'f.txt')).toThrow(/holds no rule/);
    expect(() => parseFilterRules('\ufeff+ *.pdf\r\n', 'f.txt')).not.toThrow();
    expect(() => settingsOf(OTHER_SETTINGS.scan, { filterFrom: 'f.txt', include: ['*.pdf'] })).toThrow(/--filter-from cannot be given with --include or --exclude: put those in the file/);
    // Empty lists say nothing: the rules file alone is read (and here it is missing).
    expect(() => settingsOf(OTHER_SETTINGS.scan, { filterFrom: 'f.txt', include: [], exclude: [] })).toThrow(/f\.txt/);
    expect(() => settingsOf(OTHER_SETTINGS.scan, { filterFrom: 'f.txt', include: [], exclude: [] })).not.toThrow(/cannot be given with/);
  });
});
