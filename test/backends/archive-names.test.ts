// How archive entry names become names: the rules in order (flag, Unicode Path field, UTF-8, code
// page), the cp437 default and the traps it must not fall into, and the readings a refusal shows.
import { describe, expect, it } from 'vitest';
import { archiveEncoding, likelyReadings, plainlyWords } from '../../src/backends/archive-encoding.js';
import { zipEntryName } from '../../src/backends/zip/names.js';
import { inCodePage, unicodePathField } from '../helpers/zip-bytes.js';

/** The extra fields of one Unicode Path field, as yauzl parses them. */
function fields(extra: Buffer): { id: number; data: Buffer }[] {
  return [{ id: extra.readUInt16LE(0), data: extra.subarray(4) }];
}

describe('the cp437 default takes plain words only', () => {
  it.each(['Résumé.pdf', 'Größe/Übersicht.docx', 'RÉSUMÉ 2024.pdf', 'Café crème.txt', 'Ñandú.jpg', 'Åsa och Göran.doc'])('takes %s', (name) => {
    expect(plainlyWords(name)).toBe(true);
  });

  it.each([
    ['ÅÇÅèÇ', 'ПАПКА in cp866: accented capitals with no ASCII letter'],
    ['ReportÅÇÅ', 'ПАП after ASCII letters: a capital after a small letter, three in a row'],
    ['ô·û{îΩ.txt', 'Shift-JIS: a middle dot and a Greek capital'],
    ['Ac╞o.pdf', 'cp850 ã read as cp437: box drawing'],
    ['├ñ.txt', 'UTF-8 ä read as cp437'],
    ['À.pdf', 'an accented letter alone: nothing to tell it by'],
    ['file±.txt', 'a math sign'],
    ['α.txt', 'Greek'],
  ])('refuses %s (%s)', (name) => {
    expect(plainlyWords(name)).toBe(false);
  });
});

describe('zip entry names, in the order of the rules', () => {
  it('1. the UTF-8 flag: UTF-8, whatever the code page given', () => {
    expect(zipEntryName({ raw: Buffer.from('日本語.txt'), flags: 0x800, extraFields: [] }, 'cp437')).toMatchObject({ ok: true, name: '日本語.txt', rule: 'utf8-flag' });
  });

  it('2. a Unicode Path field whose CRC is of the raw name gives its name; a stale one is ignored', () => {
    const raw = inCodePage('日本語.txt', 'cp437'); // "???.txt", as WinZip writes it
    expect(raw.toString('latin1')).toBe('???.txt');
    expect(zipEntryName({ raw, flags: 0, extraFields: fields(unicodePathField(raw, '日本語.txt')) }, undefined)).toMatchObject({ ok: true, name: '日本語.txt', rule: 'unicode-path' });
    const renamed = inCodePage('Übersicht.docx', 'cp437');
    const stale = fields(unicodePathField(inCodePage('Other.docx', 'cp437'), 'Other.docx'));
    expect(zipEntryName({ raw: renamed, flags: 0, extraFields: stale }, undefined)).toMatchObject({ ok: true, name: 'Übersicht.docx', rule: 'cp437-default' });
  });

  it('3. a name that is valid UTF-8 without the flag is UTF-8 (macOS), decomposed forms kept', () => {
    const nfd = 'Café.txt'.normalize('NFD');
    expect(zipEntryName({ raw: Buffer.from(nfd), flags: 0, extraFields: [] }, undefined)).toMatchObject({ ok: true, name: nfd, rule: 'utf8' });
  });

  it('4. a code page named decodes; the cp437 default only where it gives words; else refused with the readings', () => {
    const sjis = inCodePage('日本語の資料.txt', 'cp932');
    expect(zipEntryName({ raw: sjis, flags: 0, extraFields: [] }, 'cp932')).toMatchObject({ ok: true, name: '日本語の資料.txt', rule: 'code-page' });
    const refused = zipEntryName({ raw: sjis, flags: 0, extraFields: [] }, undefined);
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.reason).toContain('--archive-encoding');
    expect(refused.reason).toContain('cp932: 日本語の資料.txt');
    const cp866 = zipEntryName({ raw: inCodePage('ПАПКА/Отчет.txt', 'cp866'), flags: 0, extraFields: [] }, undefined);
    expect(cp866).toMatchObject({ ok: false });
    expect(cp866.ok ? '' : cp866.reason).toContain('cp866: ПАПКА/Отчет.txt');
    const cp850 = inCodePage('Ação.pdf', 'cp850');
    expect(zipEntryName({ raw: cp850, flags: 0, extraFields: [] }, undefined).ok).toBe(false);
    expect(zipEntryName({ raw: cp850, flags: 0, extraFields: [] }, 'cp850')).toMatchObject({ ok: true, name: 'Ação.pdf' });
  });

  it('a byte the named code page has no character for is refused, not replaced', () => {
    // 0x81 0x20 is no character in Shift-JIS.
    const verdict = zipEntryName({ raw: Buffer.from([0x61, 0x81, 0x20, 0x62]), flags: 0, extraFields: [] }, 'cp932');
    expect(verdict.ok).toBe(false);
    expect(verdict.ok ? '' : verdict.reason).toContain('not valid cp932');
  });

  it('a name decoded into control characters is refused as any such name is', () => {
    // cp437 byte 0x07 is BEL, decoded as U+0007 with the option given.
    const verdict = zipEntryName({ raw: Buffer.from([0x82, 0x07, 0x61]), flags: 0, extraFields: [] }, 'cp437');
    expect(verdict).toMatchObject({ ok: false, reason: expect.stringContaining('control characters') });
  });
});

describe('--archive-encoding', () => {
  it('takes code pages and their aliases, in any case', () => {
    for (const name of ['cp437', 'CP850', 'cp852', 'cp866', 'cp932', 'shift_jis', 'cp936', 'gbk', 'cp949', 'cp950', 'big5', 'windows-1250', 'windows-1258', 'koi8-r']) {
      expect(() => archiveEncoding(name), name).not.toThrow();
    }
  });

  it('refuses what is not a code page, listing those it takes', () => {
    for (const name of ['cp999', 'utf-16le', 'base64', '']) {
      expect(() => archiveEncoding(name), name).toThrow(/not a code page ferry knows; it takes cp437, cp850/);
    }
  });

  it('readings put the code pages giving one script first', () => {
    expect(likelyReadings(inCodePage('Größe.txt', 'cp850'))[0]).toMatch(/^cp(437|850): Größe\.txt$/);
    expect(likelyReadings(inCodePage('Отчет.txt', 'windows-1251'))).toContain('windows-1251: Отчет.txt');
  });
});

describe('readings of Cyrillic', () => {
  it('put cp866 before the Latin pages whose letters look like words but are not', () => {
    expect(likelyReadings(inCodePage('ПАПКА/ОТЧЕТ.TXT', 'cp866'))[0]).toBe('cp866: ПАПКА/ОТЧЕТ.TXT');
    expect(likelyReadings(inCodePage('Договор.docx', 'cp866'))[0]).toBe('cp866: Договор.docx');
  });
});
