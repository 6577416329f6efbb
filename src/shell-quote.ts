// A word as a POSIX shell takes it back: as it is when it holds only safe characters, else in
// single quotes (a quote inside closed, escaped and reopened). Ground floor: the rooms below the
// command (a migration's messages) name commands too; src/cli/shell-words.ts shows control
// characters escaped first, for what reaches a terminal.
export function shellQuote(text: string): string {
  return SAFE.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

const SAFE = /^[A-Za-z0-9_.\/:@%+=,-]+$/;
