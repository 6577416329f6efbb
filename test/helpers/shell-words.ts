// A printed command split into its words as a POSIX shell splits it: blanks between words, '…'
// taken as it is, "…" and \ as the shell reads them (no expansion: ferry prints none to expand).
export function shellWords(command: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i] as string;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && /["\\$`]/.test(command[i + 1] ?? '')) word += command[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= '';
    } else if (c === '\\') {
      word = (word ?? '') + (command[++i] ?? '');
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? '') + c;
  }
  if (quote) throw new Error(`unclosed ${quote} in ${command}`);
  if (word !== undefined) words.push(word);
  return words;
}
