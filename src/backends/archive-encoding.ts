// How an archive entry's name bytes become a name, when the archive does not say they are UTF-8.
// A name decoded wrongly and uploaded stays on the service for good (it keeps every document), so
// a code page is applied only where the user named it, or where the zip default (cp437) plainly
// gives words; anything else is refused with how it reads in the likeliest code pages. The
// decoding itself is iconv-lite's (Node's TextDecoder has no IBM code pages); the judgement of
// "plainly words" is ferry's own, so it is written here.
import { iconv } from '../libraries.js';
import { ConfigurationError } from '../errors.js';
import { checkDecodedName, type NameVerdict } from './names.js';
import { visible } from '../text.js';

/** The code pages named in messages; any alias iconv-lite knows for a single- or double-byte page is taken too. */
export const ARCHIVE_ENCODINGS = [
  'cp437', 'cp850', 'cp852', 'cp855', 'cp857', 'cp858', 'cp860', 'cp861', 'cp862', 'cp863', 'cp865', 'cp866', 'cp869', 'cp874',
  'cp932 (shift_jis)', 'cp936 (gbk)', 'cp949 (euc-kr)', 'cp950 (big5)', 'gb18030', 'euc-jp',
  'windows-1250', 'windows-1251', 'windows-1252', 'windows-1253', 'windows-1254', 'windows-1255', 'windows-1256', 'windows-1257', 'windows-1258',
  'iso-8859-1 … iso-8859-16', 'koi8-r', 'koi8-u', 'macroman',
] as const;

/** Names iconv-lite knows that are not a code page for file names (Unicode forms, binary-to-text). */
const NOT_A_CODE_PAGE = /^(utf|ucs|cesu|base64|hex|binary|unicode|utf7)/i;

/** The user's --archive-encoding, checked once before anything is read: exit 2 naming what it takes. */
export function archiveEncoding(name: string): string {
  return codePage('--archive-encoding', name);
}

/** A code page named by `flag` (--archive-encoding, --manifest-encoding): one list, one error, exit 2 naming what it takes. */
export function codePage(flag: string, name: string): string {
  const wanted = name.trim().toLowerCase();
  if (!wanted || NOT_A_CODE_PAGE.test(wanted.replace(/[^a-z0-9]/g, '')) || !iconv().encodingExists(wanted)) {
    throw new ConfigurationError(`${flag} "${visible(name)}" is not a code page ferry knows; it takes ${ARCHIVE_ENCODINGS.join(', ')} (and their usual aliases)`);
  }
  return wanted;
}

/** Text in a code page, decoded as a stream (a manifest saved by old Excel's "CSV (Comma delimited)"). */
export function decodingStream(encoding: string): NodeJS.ReadWriteStream {
  return iconv().decodeStream(encoding);
}

/** The bytes in a code page, or undefined where a byte sequence has no character there. */
export function decodeIn(raw: Buffer, encoding: string): string | undefined {
  const text = iconv().decode(raw, encoding);
  return text.includes('\ufffd') ? undefined : text;
}

/**
 * Whether a cp437 reading is plainly words, so that it may be taken without being told: every
 * character past ASCII is a Latin letter (no box drawing, block elements, Greek or math signs),
 * and each run of letters holding one also holds an ASCII letter, at most two such letters in a
 * row, and no capital after a small letter. So `Résumé`, `Größe`, `Übersicht` and `RÉSUMÉ` pass;
 * `ÅÇÅèÇ` (`ПАПКА` in cp866), `ReportÅÇÅ`, `ô·û{î` (Shift-JIS) do not. A name that is nothing but
 * accented letters (`À`) is refused too: the default does not take what it cannot tell apart.
 */
export function plainlyWords(text: string): boolean {
  for (const ch of text) {
    const code = ch.codePointAt(0) as number;
    if (code < 0x80) continue;
    if (!/^[\p{Lu}\p{Ll}]$/u.test(ch) || !/^\p{Script=Latin}$/u.test(ch)) return false;
  }
  for (const run of text.match(/\p{L}+/gu) ?? []) {
    if (!/[^\x00-\x7f]/.test(run)) continue;
    if (!/[A-Za-z]/.test(run)) return false;
    if (/[^\x00-\x7f]{3}/.test(run)) return false;
    if (/\p{Ll}\p{Lu}/u.test(run)) return false;
  }
  return true;
}

/** The code pages a hint tries, in the order a tie is shown. */
const LIKELY = ['cp437', 'cp850', 'cp852', 'cp866', 'windows-1252', 'windows-1250', 'windows-1251', 'cp932', 'cp936', 'cp949', 'cp950'];

/**
 * How the name reads in the code pages most likely to be its own: first those with the fewest
 * oddities (a character that is no letter, a Latin word shaped as no word is), then those of one script.
 */
export function likelyReadings(raw: Buffer, most = 3): string[] {
  const scored: { encoding: string; text: string; odd: number; scripts: number }[] = [];
  for (const encoding of LIKELY) {
    const text = decodeIn(raw, encoding);
    if (text === undefined || !checkDecodedName(text).ok) continue;
    let odd = 0;
    const scripts = new Set<string>();
    for (const ch of text) {
      if ((ch.codePointAt(0) as number) < 0x80) continue;
      const script = scriptOf(ch);
      if (script) scripts.add(script);
      else odd++;
    }
    for (const run of text.match(/\p{L}+/gu) ?? []) odd += misshapen(run);
    scored.push({ encoding, text, odd, scripts: scripts.size });
  }
  scored.sort((a, b) => a.odd - b.odd || a.scripts - b.scripts);
  return scored.slice(0, most).map((s) => `${s.encoding}: ${visible(s.text)}`);
}

/** How far a run of letters is from a word: a capital after a small letter, and for accented Latin, no plain letter beside it or three in a row. */
function misshapen(run: string): number {
  let odd = /\p{Ll}\p{Lu}/u.test(run) ? 1 : 0;
  if (/[\u0080-\u024f]/.test(run)) {
    if (!/[A-Za-z]/.test(run)) odd++;
    if (/[\u0080-\u024f]{3}/.test(run)) odd++;
  }
  return odd;
}

/** A letter's script (Japanese kana and Han count as one); undefined for anything that is not a letter. */
function scriptOf(ch: string): string | undefined {
  if (/\p{Script=Latin}/u.test(ch) && /\p{L}/u.test(ch)) return 'Latin';
  if (/\p{Script=Cyrillic}/u.test(ch)) return 'Cyrillic';
  if (/\p{Script=Greek}/u.test(ch) && /\p{L}/u.test(ch)) return 'Greek';
  if (/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u303f\uff01-\uff5e]/u.test(ch)) return 'CJK';
  if (/\p{Script=Hangul}/u.test(ch)) return 'Hangul';
  if (/\p{Script=Hebrew}|\p{Script=Arabic}|\p{Script=Thai}/u.test(ch)) return 'other';
  return undefined;
}

/** Which rule gave an entry its name (the dry run counts them). */
export type NameRule = 'utf8-flag' | 'unicode-path' | 'utf8' | 'code-page' | 'cp437-default';

export type ArchiveNameVerdict = NameVerdict & { rule?: NameRule };

export const ENCODING_UNKNOWN = 'the name is not UTF-8 and the archive does not say its code page; in cp437 (the zip default) it does not read as plain words, so it is not uploaded under a guessed name: pass --archive-encoding NAME';

/**
 * A name that is not UTF-8, in the code page the user named, or in cp437 where that plainly gives
 * words (`defaultCp437`: zips, whose spec names cp437; not tars, which name no code page).
 * `refused` is the verdict on the raw bytes as they stand (the not-UTF-8 refusal, with its key).
 */
export function decodeLegacyName(raw: Buffer, encoding: string | undefined, defaultCp437: boolean, rejected: NameVerdict & { ok: false }): ArchiveNameVerdict {
  if (encoding) {
    const text = decodeIn(raw, encoding);
    if (text === undefined) {
      return { ...rejected, reason: `the name is not UTF-8, and not valid ${encoding} either (--archive-encoding): ${readingsText(raw)}` };
    }
    return { ...checkDecodedName(text), rule: 'code-page' };
  }
  if (defaultCp437) {
    const text = iconv().decode(raw, 'cp437');
    if (plainlyWords(text)) return { ...checkDecodedName(text), rule: 'cp437-default' };
    return { ...rejected, reason: `${ENCODING_UNKNOWN}. ${readingsText(raw)}` };
  }
  return { ...rejected, reason: `${rejected.reason}, or pass --archive-encoding NAME if it was made in a known code page. ${readingsText(raw)}` };
}

function readingsText(raw: Buffer): string {
  const readings = likelyReadings(raw);
  return readings.length ? `It reads as ${readings.join(' | ')}` : 'It reads as text in none of the usual code pages';
}
