// Summaries laid out for the terminal they land on: a line longer than the terminal is wide is
// broken at spaces, never inside a word, so an id or a path is never cut in two by the terminal's
// own wrapping; what follows is indented under the line it continues. A single word longer than
// the width stands on a line of its own. Off a terminal (a file, cron mail, a pipe) lines are kept
// whole, one record per line for grep.

export function outputWidth(stream: NodeJS.WriteStream = process.stdout): number {
  if (!stream.isTTY) return Number.POSITIVE_INFINITY;
  return Math.max(40, stream.columns || 80);
}

export function layout(text: string, width = outputWidth()): string {
  return text
    .split('\n')
    .map((line) => (line.length <= width ? line : wrap(line, width)))
    .join('\n');
}

function wrap(line: string, width: number): string {
  const indent = /^ */.exec(line)?.[0] ?? '';
  const more = `${indent}    `;
  const words = line.slice(indent.length).split(' ');
  const out: string[] = [];
  let current = indent;
  for (const word of words) {
    const lead = current === indent || current === more;
    if (!lead && current.length + 1 + word.length > width) {
      out.push(current);
      current = more;
    }
    current += current === indent || current === more ? word : ` ${word}`;
  }
  out.push(current);
  return out.join('\n');
}
