// The local-name rules as pure logic: encoding then decoding gives every name back (the
// substitutes and the quote included, rclone #6098/#7456/#7824 being what goes wrong otherwise),
// what windows rules write is a name Windows takes, and no two names of one folder share a local
// name, with case folded.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeSegment, encodeSegment, hasHashTag, isReserved, QUOTE, windowsAllows } from '../../src/backends/name-rules.js';
import { LocalNamer } from '../../src/backends/local/namer.js';
import { timeStep } from '../../src/backends/local/probe.js';

/** The characters that matter, weighted up: Windows' refused ones, their substitutes, the quote, dots, spaces, controls, case. */
const TRICKY = [
  ...'<>:"\\|?*#%&{}$!\'@+`=;,[]. aAcCoOnNuUlLpPrRxX0123456789¹²³',
  '\uff1a', '\uff1f', '\uff1c', '\uff0a', '\uff3c', '\uff02', '\uff5c', '\uff0e', '\u2420', '\u2400', '\u2401', '\u241f', QUOTE,
  '\uff23', '\uff43', '\uff2e', '\uff41', '\uff2c', '\u0001', '\u001f', '\u0000', '\u007f', 'é', 'e\u0301', '日', '\ud83d\ude00',
];
const trickyName = fc.oneof(
  fc.array(fc.constantFrom(...TRICKY), { minLength: 1, maxLength: 12 }).map((cs) => cs.join('')),
  fc.constantFrom('CON', 'con.txt', 'Aux', 'NUL.tar.gz', 'COM1', 'lpt¹.doc', 'COM0', 'PRN.', '\uff23ON', '\uff23ON.txt', `${QUOTE}\uff23ON`, 'trail.', 'trail ', '.', '..', '...'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }),
);

describe('local names: windows rules', () => {
  it('decode(encode(name)) is the name, for every name', () => {
    fc.assert(
      fc.property(trickyName, (name) => {
        expect(decodeSegment(encodeSegment(name, 'windows').name)).toBe(name);
        expect(decodeSegment(encodeSegment(name, 'strict').name)).toBe(name);
      }),
      { numRuns: 5000 },
    );
  });

  it('writes only names Windows takes', () => {
    fc.assert(
      fc.property(trickyName.filter((n) => !n.includes('/')), (name) => {
        const local = encodeSegment(name, 'windows').name;
        expect(windowsAllows(local), JSON.stringify([name, local])).toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  it('maps the names of the issue as rclone and Windows would have them', () => {
    const cases: [string, string][] = [
      ['Q3: review?.docx', 'Q3\uff1a review\uff1f.docx'],
      ['Q3\uff1a review\uff1f.docx', `Q3${QUOTE}\uff1a review${QUOTE}\uff1f.docx`],
      ['x<y>.txt', 'x\uff1cy\uff1e.txt'],
      ['pipe|.txt', 'pipe\uff5c.txt'],
      ['trail.', 'trail\uff0e'],
      ['trail ', 'trail\u2420'],
      ['CON.txt', '\uff23ON.txt'],
      ['aux', '\uff41ux'],
      ['COM\u00b9', '\uff23OM\u00b9'],
      ['tab\there', 'tab\u2409here'],
      ['Client: Acme', 'Client\uff1a Acme'],
      ['plain name.pdf', 'plain name.pdf'],
    ];
    for (const [name, local] of cases) {
      expect(encodeSegment(name, 'windows').name, name).toBe(local);
      expect(decodeSegment(local)).toBe(name);
    }
    expect(encodeSegment('plain name.pdf', 'windows').why).toBeUndefined();
    expect(encodeSegment('CON.txt', 'windows').why).toMatch(/device name/);
    expect(isReserved('con.tar.gz')).toBe(true);
    expect(isReserved('console.txt')).toBe(false);
  });

  it('posix rules keep every name but ".", ".." and NUL', () => {
    expect(encodeSegment('Q3: review?.docx', 'posix').name).toBe('Q3: review?.docx');
    expect(encodeSegment('tab\there', 'posix').name).toBe('tab\there');
    expect(encodeSegment('.', 'posix').name).toBe('%2E');
    expect(encodeSegment('..', 'posix').name).toBe('%2E%2E');
    expect(encodeSegment('a\u0000b', 'posix').name).toBe('a%00b');
  });
});

describe('local names: one file per document', () => {
  it('no two distinct names of one folder map to one local name, case folded', () => {
    fc.assert(
      fc.property(fc.uniqueArray(trickyName.filter((n) => !n.includes('/')), { minLength: 2, maxLength: 30 }), fc.constantFrom('windows', 'posix') as fc.Arbitrary<'windows' | 'posix'>, (names, rules) => {
        const namer = new LocalNamer(rules, true);
        const locals = names.map((n) => namer.map(`folder/${n}`).local);
        const folded = locals.map((l) => l.normalize('NFC').toLocaleLowerCase('en-US'));
        expect(new Set(folded).size).toBe(names.length);
        // The same answer when asked again.
        expect(names.map((n) => namer.map(`folder/${n}`).local)).toEqual(locals);
      }),
      { numRuns: 2000 },
    );
  });

  it('a name over 255 bytes is shortened with a hash tag, extension kept', () => {
    const namer = new LocalNamer('windows', true);
    const long = `${'\u00e9'.repeat(200)}.pdf`;
    const { local, why } = namer.map(long);
    expect(Buffer.byteLength(local)).toBeLessThanOrEqual(255);
    expect(local.endsWith('.pdf')).toBe(true);
    expect(hasHashTag(local)).toBe(true);
    expect(why).toMatch(/longer than 255 bytes/);
  });

  it('a segment the file system refused is written with the strict rules from then on', () => {
    const namer = new LocalNamer('windows', false);
    expect(namer.map('a#b/x.txt').local).toBe('a#b/x.txt');
    namer.strict('a#b');
    expect(namer.map('a#b/x.txt').local).toBe('a\uff03b/x.txt');
    expect(decodeSegment('a\uff03b')).toBe('a#b');
  });
});

describe('file time steps', () => {
  it('tells 1 ms, 10 ms, 1 s and 2 s file systems apart from one probe time', () => {
    expect(timeStep(1_700_000_001_234.567)).toBe(1);
    expect(timeStep(1_700_000_001_234)).toBe(1);
    expect(timeStep(1_700_000_001_230)).toBe(10);
    expect(timeStep(1_700_000_001_000)).toBe(1000);
    expect(timeStep(1_700_000_002_000)).toBe(2000);
  });
});

describe('a file and a folder whose names fold to one', () => {
  it('whichever comes first keeps the name; the other gets the hash, and the folder\'s files follow it', () => {
    for (const fileFirst of [true, false]) {
      const namer = new LocalNamer('windows', true);
      const file = () => namer.map('AUX');
      const folder = () => namer.map('aux', true);
      const [f, d] = fileFirst ? [file(), folder()] : [folder(), file()].reverse();
      expect(f.local.toLowerCase(), String(fileFirst)).not.toBe(d.local.toLowerCase());
      expect(hasHashTag(fileFirst ? d.local : f.local)).toBe(true);
      expect(namer.map('aux/inside.txt').local).toBe(`${d.local}/inside.txt`);
      // Two folders differing only by case still share one (on this file system, one folder).
      expect(namer.map('Aux', true).local.toLowerCase()).toBe(d.local.toLowerCase());
      expect(namer.map('Aux/other.txt').local.toLowerCase()).toBe(`${d.local}/other.txt`.toLowerCase());
    }
  });
});
