// A word as a POSIX shell takes it back, for the commands ferry tells its user to run: as it is
// when it holds only safe characters, else in single quotes (a quote inside closed, escaped and
// reopened). Control characters are shown escaped first (names from files or the service).
import { visible } from '../backends/names.js';

export function shellWord(text: string): string {
  return /^[A-Za-z0-9_.\/:@%+=,-]+$/.test(text) ? text : `'${visible(text).replace(/'/g, `'\\''`)}'`;
}
