// Progress for people and for cron mail: on a TTY one live line redrawn in place (items, bytes,
// rate, ETA, failures); elsewhere a plain record every `intervalMs`, so a log stays readable.
import type { RunCounts } from '../store/types.js';

export interface ProgressState {
  counts: RunCounts;
  /** Bytes uploaded so far. */
  bytes: number;
  /** Bytes of the files discovered that need uploading. */
  bytesPlanned: number;
  /** Files discovered that need uploading. */
  itemsPlanned: number;
  /** Discovery still running (totals may grow). */
  discovering: boolean;
}

export interface ProgressOptions {
  stream?: NodeJS.WriteStream;
  /** Off a TTY, one record this often (default 30 s). */
  intervalMs?: number;
  enabled?: boolean;
}

export class Progress {
  private readonly stream: NodeJS.WriteStream;
  private readonly tty: boolean;
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly started = Date.now();
  private lastLength = 0;

  constructor(private readonly state: ProgressState, opts: ProgressOptions = {}) {
    this.stream = opts.stream ?? process.stderr;
    this.tty = this.stream.isTTY === true;
    if (opts.enabled === false) return;
    this.timer = setInterval(() => this.render(), this.tty ? 250 : (opts.intervalMs ?? 30_000));
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.tty && this.lastLength > 0) this.stream.write(`\r${' '.repeat(this.lastLength)}\r`);
  }

  render(): void {
    const line = describeProgress(this.state, Date.now() - this.started, this.tty);
    if (this.tty) {
      this.stream.write(`\r${line.padEnd(this.lastLength)}`);
      this.lastLength = line.length;
    } else {
      this.stream.write(`${new Date().toISOString()} progress ${line}\n`);
    }
  }
}

export function describeProgress(s: ProgressState, elapsedMs: number, bar: boolean): string {
  const c = s.counts;
  const done = c.uploaded + c.reconciled;
  const rate = elapsedMs > 0 ? s.bytes / (elapsedMs / 1000) : 0;
  const remaining = Math.max(0, s.bytesPlanned - s.bytes);
  const eta = s.discovering || rate === 0 ? '?' : formatDuration((remaining / rate) * 1000);
  const parts = [
    `${done}/${s.itemsPlanned}${s.discovering ? '+' : ''} files`,
    `${formatBytes(s.bytes)}/${formatBytes(s.bytesPlanned)}`,
    `${formatBytes(rate)}/s`,
    `eta ${eta}`,
    `skipped ${c.skipped}`,
    `failed ${c.failed}`,
  ];
  if (!bar) return parts.join(' ');
  // Two bars: files and bytes (many small files and one huge one move them very differently).
  return `files ${meter(s.itemsPlanned > 0 ? done / s.itemsPlanned : 0)} ${parts[0]}  bytes ${meter(s.bytesPlanned > 0 ? s.bytes / s.bytesPlanned : 0)} ${parts.slice(1).join('  ')}`;
}

function meter(fraction: number, width = 16): string {
  const filled = Math.max(0, Math.min(width, Math.round(fraction * width)));
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
}

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
