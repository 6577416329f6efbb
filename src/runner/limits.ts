// A run kept to its window: at a time since it started, a volume of content or a count of items
// started, it starts nothing new, and the next run carries on (rclone's --max-duration,
// --max-transfer and --cutoff-mode). Soft, in-flight transfers finish; hard, they are cancelled at
// once and left to the next run to settle, as after a second signal. Exactly once holds either way:
// an item started is journalled as an intent before it is sent (src/sync/intents.ts).
export type CutoffMode = 'soft' | 'hard';

export interface LimitSettings {
  /** Time since the run started. */
  maxDurationMs?: number | undefined;
  /** Content bytes of the items started (sent, or received for a pull). */
  maxTransfer?: number | undefined;
  /** Items started. */
  maxFiles?: number | undefined;
  cutoff?: CutoffMode | undefined;
}

export type LimitName = 'max-duration' | 'max-transfer' | 'max-files';

/** Which limit stopped the run, and how far it got. */
export interface LimitReached {
  limit: LimitName;
  /** The limit's value: ms, bytes or items. */
  value: number;
  cutoff: CutoffMode;
  /** Items started and their bytes, and the time since the start, when it was reached. */
  started: number;
  startedBytes: number;
  elapsedMs: number;
}

/** Whether any limit is set. */
export function hasLimits(s: LimitSettings | undefined): s is LimitSettings {
  return !!s && (s.maxDurationMs !== undefined || s.maxTransfer !== undefined || s.maxFiles !== undefined);
}

export class RunLimits {
  private readonly stopping = new AbortController();
  private readonly cancelling = new AbortController();
  private files = 0;
  private bytes = 0;
  private readonly begun: number;
  private timer: NodeJS.Timeout | undefined;
  reached: LimitReached | undefined;

  constructor(
    readonly settings: LimitSettings,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.begun = now();
  }

  /** Fires at the limit: nothing new is started. */
  get stop(): AbortSignal {
    return this.stopping.signal;
  }

  /** Fires at the limit under --cutoff-mode hard: transfers in flight are cancelled. */
  get cancel(): AbortSignal {
    return this.cancelling.signal;
  }

  /** Starts the clock of --max-duration (the run began at construction). */
  start(): this {
    const ms = this.settings.maxDurationMs;
    if (ms !== undefined && !this.timer) {
      this.timer = setTimeout(() => this.trip('max-duration', ms), Math.max(0, ms - (this.now() - this.begun)));
      this.timer.unref();
    }
    return this;
  }

  /**
   * Asked as an item is about to start: whether it may. Counted when it may. A count limit lets
   * exactly that many start; a volume limit lets items start while less than it has started (the
   * last may cross it: at most one item a slot beyond the budget).
   */
  admit(size: number): boolean {
    if (this.reached) return false;
    const { maxFiles, maxTransfer, maxDurationMs } = this.settings;
    if (maxDurationMs !== undefined && this.now() - this.begun >= maxDurationMs) return this.trip('max-duration', maxDurationMs);
    if (maxFiles !== undefined && this.files >= maxFiles) return this.trip('max-files', maxFiles);
    if (maxTransfer !== undefined && this.bytes >= maxTransfer) return this.trip('max-transfer', maxTransfer);
    this.files++;
    this.bytes += size;
    return true;
  }

  dispose(): void {
    clearTimeout(this.timer);
  }

  private trip(limit: LimitName, value: number): false {
    if (this.reached) return false;
    const cutoff = this.settings.cutoff ?? 'soft';
    this.reached = { limit, value, cutoff, started: this.files, startedBytes: this.bytes, elapsedMs: Math.round(this.now() - this.begun) };
    this.stopping.abort(new Error(`the ${limit} limit was reached`));
    if (cutoff === 'hard') this.cancelling.abort(new Error(`the ${limit} limit was reached (hard cutoff)`));
    return false;
  }
}
