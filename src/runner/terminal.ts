// The one way text reaches stderr while a live status line may be drawn there: the line is cleared,
// the text written in its place, and the line drawn again below it. Without this a log line or a
// notice lands in the middle of the live line and leaves debris on the screen. Kept apart from
// progress.ts (which loads cli-progress) so that the logger can use it at no start-up cost.

/** What a live line must do for text written above it. */
export interface LiveLine {
  /** Writes whole lines above the live line, then draws the line again. */
  above(text: string): void;
  /** Clears the line and gives the terminal back as it was (line wrapping on). */
  stop(): void;
}

let drawn: LiveLine | undefined;

/** The live line now drawn on stderr (one at a time), or none. */
export function setLiveLine(line: LiveLine | undefined): void {
  drawn = line;
}

export function liveLineShown(line: LiveLine): boolean {
  return drawn === line;
}

/** A process about to exit at once (a second Ctrl-C) leaves no half-drawn line behind. */
export function endLiveLine(): void {
  drawn?.stop();
}

/** Writes text meant for stderr: above the live line when one is drawn, else as it is. */
export function writeStderr(text: string): void {
  if (drawn) drawn.above(text);
  else process.stderr.write(text);
}
