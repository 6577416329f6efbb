// A word as a POSIX shell takes it back, for the commands ferry tells its user to run, with
// control characters shown escaped first (names from files or the service): quoted by the one
// rule (../shell-quote.ts).
import { visible } from '../text.js';
import { shellQuote } from '../shell-quote.js';

export function shellWord(text: string): string {
  return shellQuote(visible(text));
}
