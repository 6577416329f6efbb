// How any text ferry did not write itself is shown, and how sizes and durations read: the ground
// floor of every message, summary, page and log line (names from files or the service never reach
// a terminal or a page unescaped). Written by hand: the escaping is ferry's own rule (lossless, a
// name holding `\n` never looks like one holding a newline), and no library draws this line.

/**
 * What is escaped when a name is shown: controls, line and paragraph separators, the bidirectional
 * marks and overrides, a byte-order mark, lone surrogates (bytes that were not UTF-8), and the
 * backslash itself, so that a name holding `\n` and one holding a newline never look alike.
 */
const INVISIBLE = /[\\\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]/gu;

/** A name safe to write to a terminal or a log line, losslessly: what would hide or mislead is escaped. */
export function visible(text: string): string {
  return text.replace(INVISIBLE, (c) => {
    const code = c.charCodeAt(0);
    if (c === '\\') return '\\\\';
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    // A byte that was not UTF-8, carried as a lone surrogate (see NameVerdict).
    if (code >= 0xdc80 && code <= 0xdcff) return `\\x${(code - 0xdc00).toString(16)}`;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * Free text (a message that may quote names) safe for a terminal: the same escapes as `visible` but
 * the backslash, which messages use for their own notation (\xNN, \n).
 */
export function safeText(text: string): string {
  return text.replace(INVISIBLE, (c) => (c === '\\' ? c : visible(c)));
}

/** Raw bytes shown losslessly: valid UTF-8 runs as text (escaped as `visible` does), every other byte as \xNN. */
export function showBytes(raw: Buffer): string {
  return visible(surrogateEscape(raw));
}

/** Raw bytes as a string: well-formed UTF-8 decoded, every other byte b as the lone surrogate U+DC00+b. */
export function surrogateEscape(raw: Buffer): string {
  let out = '';
  let i = 0;
  while (i < raw.length) {
    const len = sequenceLength(raw, i);
    if (len === 0) {
      out += String.fromCharCode(0xdc00 + (raw[i] as number));
      i++;
    } else {
      out += raw.subarray(i, i + len).toString('utf8');
      i += len;
    }
  }
  return out;
}

/** Length of the well-formed UTF-8 sequence starting at `i`, or 0 if there is none. */
function sequenceLength(b: Buffer, i: number): number {
  const c = b[i] as number;
  if (c < 0x80) return 1;
  const cont = (k: number) => i + k < b.length && ((b[i + k] as number) & 0xc0) === 0x80;
  const second = b[i + 1] ?? 0;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if (c === 0xe0 && second < 0xa0) return 0;
    if (c === 0xed && second > 0x9f) return 0; // surrogates
    return cont(1) && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (c === 0xf0 && second < 0x90) return 0;
    if (c === 0xf4 && second > 0x8f) return 0;
    return cont(1) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/** A size as people read it: 1.5 MiB. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v.toFixed(0) : v.toFixed(1)} ${units[u]}`;
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m${String(sec).padStart(2, '0')}s` : `${sec}s`;
}
