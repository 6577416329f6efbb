// Progress for people and for cron mail, one renderer for every job. On a terminal, one live
// line drawn by cli-progress, cut to the terminal's width so it never wraps; listing and transfer
// are shown apart: while the listing runs (a census of the source, on a terminal only) the line
// says how much was found, and once it is complete a bar, a percentage and an ETA appear.
// Elsewhere a plain record every `intervalMs`, so a log stays readable.
import type CliProgress from 'cli-progress';
import { createRequire } from 'node:module';
import type { RunCounts } from '../store/types.js';
import { formatBytes, formatDuration } from '../text.js';
import { liveLineShown, setLiveLine } from './terminal.js';

/** How often a run off a terminal writes a progress record, and its metrics file, unless --stats says. */
export const DEFAULT_STATS_MS = 30_000;

export interface ProgressState {
  counts: RunCounts;
  /** Bytes written so far. */
  bytes: number;
  /** Bytes of the entries discovered that need writing. */
  bytesPlanned: number;
  /** Entries discovered that need writing. */
  itemsPlanned: number;
  /** The transfer's own discovery still running (totals may grow). */
  discovering: boolean;
  /** The census: entries in the whole source, and whether it has been counted to the end. */
  listed?: number;
  listingDone?: boolean;
  /** The bandwidth limit in force now (--bwlimit; a timetable's changes at its slots): null for none. */
  bwlimit?: () => number | null;
}

/** The limit in force, as the progress line says it: `limit 512 KiB/s`, or `limit off` in a timetable's off slot. */
function limitSaid(s: ProgressState): string | undefined {
  if (!s.bwlimit) return undefined;
  const rate = s.bwlimit();
  return `limit ${rate === null ? 'off' : `${formatBytes(rate)}/s`}`;
}

/** Counts a source's entries on the side, for a total worth showing (files only count). */
export type Census = (signal: AbortSignal) => AsyncIterable<{ kind: string }>;

/**
 * What a job shows while it runs, given by its caller beside the job's options (never one of them:
 * the same job shows nothing under --json, from a library, or in a test). Without one, nothing.
 */
export interface Display {
  /** The live line on a terminal, a record every `statsIntervalMs` elsewhere. */
  progress: boolean;
  /** Off a terminal, one progress record this often (default 30 s). */
  statsIntervalMs?: number | undefined;
}

export interface ProgressOptions {
  stream?: NodeJS.WriteStream;
  /** Off a terminal, one record this often (default 30 s). */
  intervalMs?: number;
  enabled?: boolean;
  /** Runs on a terminal only: listing and transfer apart, and an ETA once the listing is done. */
  census?: Census | undefined;
}

/** -q: no progress display at all, live or recorded (set once, by the CLI, before a job starts). */
let quiet = false;
export function setQuiet(on: boolean): void {
  quiet = on;
}

/**
 * One status line: on a terminal redrawn in place by cli-progress and cut to the terminal's
 * width, so it never wraps; elsewhere a timestamped line per update. Every live display of ferry
 * (transfers, batch processing) goes through it.
 */
export class StatusLine {
  private readonly bar: CliProgress.SingleBar | undefined;
  private text = '';

  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {
    if (quiet || this.stream.isTTY !== true) return;
    // Loaded only for a terminal, as the pretty log is.
    const cliProgress = createRequire(import.meta.url)('cli-progress') as typeof CliProgress;
    this.bar = new cliProgress.SingleBar({
      stream: this.stream,
      // Cut here; cli-progress also turns the terminal's wrapping off while it draws.
      format: () => this.text.slice(0, Math.max(0, (this.stream.columns || 80) - 1)),
      hideCursor: false,
      clearOnComplete: true,
      linewrap: false,
      fps: 4,
    });
    this.bar.start(1, 0);
    if (this.stream === process.stderr) setLiveLine(this);
  }

  /** Text for the terminal while the line is drawn: cleared, the text in its place, the line below it. */
  above(text: string): void {
    if (!this.bar) return void this.stream.write(text);
    // The live line moves down below the text: the bar redraws on the line it is on, and the
    // cursor position it restores when it stops (ESC 7, saved when it started) is saved here again.
    this.stream.write(`\r\u001b[2K${text.endsWith('\n') ? text : `${text}\n`}\u001b7${this.text.slice(0, Math.max(0, this.width))}`);
  }

  get live(): boolean {
    return this.bar !== undefined;
  }

  /** The terminal's width for the text (one column kept free). */
  get width(): number {
    return (this.stream.columns || 80) - 1;
  }

  update(text: string): void {
    if (quiet) return;
    if (!this.bar) {
      this.stream.write(`${new Date().toISOString()} ${text}\n`);
      return;
    }
    this.text = text;
    this.bar.update(0);
  }

  stop(): void {
    if (liveLineShown(this)) setLiveLine(undefined);
    this.bar?.stop();
  }
}

export class Progress {
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly started = Date.now();
  private readonly line: StatusLine | undefined;
  private readonly census = new AbortController();

  constructor(private readonly state: ProgressState, opts: ProgressOptions = {}) {
    if (opts.enabled === false || quiet) return;
    const stream = opts.stream ?? process.stderr;
    this.line = new StatusLine(stream);
    const line = this.line;
    if (!line.live) {
      this.timer = setInterval(() => line.update(`progress ${describeProgress(this.state, Date.now() - this.started)}`), opts.intervalMs ?? DEFAULT_STATS_MS);
      this.timer.unref();
      return;
    }
    if (opts.census) void this.count(opts.census);
    const draw = () => line.update(liveLine(this.state, Date.now() - this.started, line.width));
    draw();
    this.timer = setInterval(draw, 250);
    this.timer.unref();
  }

  stop(): void {
    this.census.abort();
    if (this.timer) clearInterval(this.timer);
    this.line?.stop();
  }

  private async count(census: Census): Promise<void> {
    let found = 0;
    try {
      for await (const entry of census(this.census.signal)) {
        if (entry.kind !== 'dir') this.state.listed = ++found;
      }
      if (!this.census.signal.aborted) this.state.listingDone = true;
    } catch {
      // The count is a nicety: a source that cannot be listed twice just shows no total.
    }
  }
}

/** The plain record (off a terminal): files, bytes, rate, ETA, problems. */
export function describeProgress(s: ProgressState, elapsedMs: number): string {
  const c = s.counts;
  const done = c.uploaded + c.reconciled;
  const rate = elapsedMs > 0 ? s.bytes / (elapsedMs / 1000) : 0;
  const remaining = Math.max(0, s.bytesPlanned - s.bytes);
  const eta = s.discovering || rate === 0 ? '?' : formatDuration((remaining / rate) * 1000);
  return [
    `${done}/${s.itemsPlanned}${s.discovering ? '+' : ''} files`,
    `${formatBytes(s.bytes)}/${formatBytes(s.bytesPlanned)}`,
    `${formatBytes(rate)}/s`,
    ...(limitSaid(s) ? [limitSaid(s)!] : []),
    // Small files move few bytes: their pace is told in files.
    `${filesPerSecond(c.uploaded + c.reconciled + c.unchanged + c.skipped + c.failed, elapsedMs)} files/s`,
    `eta ${eta}`,
    `skipped ${c.skipped}`,
    `failed ${c.failed}`,
  ].join(' ');
}

/**
 * The live line, at most `width` characters. Before the listing is complete it says what was
 * found so far and what was written; after, a bar over all entries (written, unchanged, skipped
 * and failed alike move it), a percentage and an ETA from the pace of entries so far.
 */
export function liveLine(s: ProgressState, elapsedMs: number, width: number): string {
  const c = s.counts;
  const handled = c.uploaded + c.reconciled + c.unchanged + c.skipped + c.failed;
  const rate = elapsedMs > 0 ? s.bytes / (elapsedMs / 1000) : 0;
  const problems = `skipped ${c.skipped} failed ${c.failed}`;
  const limit = limitSaid(s);
  const moved = `${formatBytes(s.bytes)} ${formatBytes(rate)}/s${limit ? ` (${limit})` : ''} ${filesPerSecond(handled, elapsedMs)} files/s`;
  let parts: string[];
  if (s.listingDone && s.listed !== undefined) {
    const total = Math.max(s.listed, handled);
    const fraction = total > 0 ? handled / total : 1;
    const pace = elapsedMs > 0 ? handled / elapsedMs : 0;
    const eta = pace > 0 ? formatDuration((total - handled) / pace) : '?';
    // What matters most first: a narrow terminal drops the parts at the end.
    parts = [`${meter(fraction)} ${Math.floor(fraction * 100)}%`, `${handled}/${total} files`, `ETA ${eta}`, moved, problems];
  } else {
    const found = s.listed ?? c.discovered;
    parts = [`listing: ${found} found`, `done ${handled}`, moved, problems];
  }
  return fit(parts, width);
}

/** Entries handled per second: one decimal under 10, whole above. */
function filesPerSecond(handled: number, elapsedMs: number): string {
  const rate = elapsedMs > 0 ? handled / (elapsedMs / 1000) : 0;
  return rate < 10 ? rate.toFixed(1) : String(Math.round(rate));
}

/** Joins parts while they fit, dropping from the end, and cuts what is left to `width`. */
function fit(parts: string[], width: number): string {
  let line = '';
  for (const part of parts) {
    const next = line ? `${line}  ${part}` : part;
    if (next.length > width) break;
    line = next;
  }
  return (line || parts[0] || '').slice(0, Math.max(0, width));
}

function meter(fraction: number, width = 20): string {
  const filled = Math.max(0, Math.min(width, Math.round(fraction * width)));
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
}
