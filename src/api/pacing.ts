// Pacing learned from the service's throttles. The spec states no rate limit, so the client finds
// it; and a real service throttles some requests at random whatever the pace, so the pacer must tell
// a limit from noise. A 429 says "fewer, please" and is always judged; a 503 says "not now", which
// a busy service answers here and there whatever the pace, so 503s count only when they persist
// (a quarter of a window or more: an overloaded or failing service).
//
// The rule, read off three models (docs/architecture.md, "Pacing"):
// - Google's SRE book, client-side throttling: judge by requests against accepts over a window,
//   never by a single answer. Answers are counted in windows of `window` responses, and the rate
//   is cut at most once per window, only when the window's throttled share lies clearly above the
//   noise floor (more throttles than the floor gives by chance once in a hundred windows, at least 2).
// - The AWS SDKs' adaptive retry mode: a cut sets the rate just under what the service was seen
//   to accept in that window, and regrowth has CUBIC's shape: quick back to near that rate, slow
//   around it for a while, probing beyond.
// - rclone's pacer: without a cut the pace recovers on its own (10 % a second when probing).
// What none of them does, and random throttles need: a cut is a trial. If a window at the lower
// rate is throttled clearly less than the highest share the trial saw, it was a limit and the cut
// stands; if not after three rounds (deeper while throttles stay above the floor), it was noise:
// the rate goes back to where it was and the least share seen becomes the noise floor. So a
// constant share of random throttles costs a few windows once, while a real limit (throttles that
// rise with the rate and fall when it falls) is kept and tracked.
// Hand-written: the rate limiters on npm (p-queue's interval among them) take a fixed rate; none
// learns one from throttles, nor tells a limit from noise.

export interface PacerOptions {
  now?: () => number;
  /** Lowest rate it will slow to, requests per second (default 1). */
  minRate?: number;
  /** Growth per second without a cut (default 1.1). */
  growth?: number;
  /** Responses per window (default 32). */
  window?: number;
}

/** A cut on probation: the rate before it, and what its rounds have seen. */
interface Trial {
  before: number | undefined;
  /** The highest throttled share seen: of the window that caused it, or of a round of it. */
  highest: number;
  /** The lowest share of its rounds (what is throttled below the limit, if any). */
  lowest: number;
  /** The most the service accepted per second in a round: near the limit, if there is one. */
  accepted: number;
  rounds: number;
}

/** How long after a kept cut the pace dwells near the rate the service accepted then. */
const PLATEAU_MS = 3_000;

/** Cuts on probation before throttles that do not fall with the rate are called noise. */
const TRIAL_ROUNDS = 3;

export class Pacer {
  private rate: number | undefined;
  private next = 0;
  private lastRaise = 0;
  private answered = 0;
  /** 429s of the window, and 503s (counted as throttles only when they persist). */
  private throttles = 0;
  private unavailable = 0;
  /** The share of the last window, when it was throttled above chance while nothing was paced. */
  private suspect: number | undefined;
  /** Throttles since the last answer that was not one. */
  private throttledInARow = 0;
  private windowStart: number | undefined;
  /** When the window reached half and three quarters of its answers, and how many were accepted by then. */
  private marks: { at: number; accepted: number }[] = [];
  private trial: Trial | undefined;
  /** The share of requests throttled whatever the rate (noise), as learned so far. */
  private floor = 0;
  /** What the service accepted when the last cut was kept: regrowth is quick up to near it. */
  private ceiling = 0;
  private keptAt = -Infinity;
  /** Cuts kept (a limit), and cuts undone (their throttles were noise). */
  cuts = 0;
  undone = 0;
  private readonly now: () => number;
  private readonly minRate: number;
  private readonly growth: number;
  private readonly window: number;

  constructor(opts: PacerOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.minRate = opts.minRate ?? 1;
    this.growth = opts.growth ?? 1.1;
    this.window = opts.window ?? 32;
  }

  /** The learned rate, requests per second (undefined while nothing is paced). */
  get currentRate(): number | undefined {
    return this.rate;
  }

  /** The share of throttles taken as noise. */
  get noiseFloor(): number {
    return this.floor;
  }

  /**
   * Whether a throttled request may go again after the ordinary backoff rather than its
   * Retry-After (the transport's wait): unless a limit was found and is paced, or the last four
   * answers were all throttles (an outage), from the fourth on. Sporadic 429s and 503s would
   * otherwise stall a job's serial start and its last items by a second each. A cut on trial
   * needs no Retry-After either: the pace it sets spaces every request, retries included.
   */
  get unlimited(): boolean {
    return (this.rate === undefined || this.trial !== undefined) && this.throttledInARow < 4;
  }

  /** Milliseconds to wait before the next request may start. */
  delay(): number {
    const now = this.now();
    let at = now;
    if (this.rate !== undefined) {
      this.raise(now);
      at = Math.max(at, this.next);
      this.next = at + 1000 / this.rate;
    }
    return at - now;
  }

  /** The service answered without throttling. */
  ok(): void {
    this.count(false);
  }

  /** The service throttled: 429, or 503 (`unavailable`). */
  throttled(unavailable = false): void {
    this.count(true, unavailable);
  }

  private count(throttled: boolean, unavailable = false): void {
    const now = this.now();
    this.windowStart ??= now;
    this.answered++;
    if (unavailable) this.unavailable++;
    else if (throttled) this.throttles++;
    this.throttledInARow = throttled ? this.throttledInARow + 1 : 0;
    if (this.answered === this.window / 2 || this.answered === (this.window * 3) / 4) this.marks.push({ at: now, accepted: this.answered - this.throttles - this.unavailable });
    // A trial's window also closes after a second with a quarter of its answers: a trial at a low
    // rate (a cut taken while few requests were sent) must not hold the pace down for long.
    const trialDue = this.trial !== undefined && now - this.windowStart >= 1000 && this.answered >= this.window / 4;
    if (this.answered < this.window && !trialDue) return;
    const answered = this.answered;
    // Accepted: neither throttled nor unavailable, whether or not the 503s count as throttles.
    const acceptedCount = answered - this.throttles - this.unavailable;
    if (this.unavailable >= answered / 4) this.throttles += this.unavailable;
    const share = this.throttles / answered;
    // Accepted per second over the window (at least 50 ms of it, against a burst of answers), or
    // over its last half or quarter when more: a window that began in a job's serial start (one
    // request at a time) would otherwise set the pace at a fraction of what the service takes.
    const span = now - this.windowStart;
    let accepted = (acceptedCount * 1000) / Math.max(50, span);
    for (const mark of this.marks) accepted = Math.max(accepted, ((acceptedCount - mark.accepted) * 1000) / Math.max(25, now - mark.at));
    this.answered = 0;
    this.throttles = 0;
    this.unavailable = 0;
    this.marks = [];
    this.windowStart = now;
    this.closeWindow(share, answered, accepted, span > 1000, now);
  }

  private closeWindow(share: number, answered: number, accepted: number, sparse: boolean, now: number): void {
    const trial = this.trial;
    if (trial) {
      trial.lowest = Math.min(trial.lowest, share);
      trial.accepted = Math.max(trial.accepted, accepted);
      if (fellClearly(trial.highest, this.window, share, answered)) {
        // Fewer throttled at the lower rate than at the higher: a limit. The cut stands, and what
        // the service accepted at most meanwhile is where the limit lies.
        this.trial = undefined;
        this.cuts++;
        this.ceiling = trial.accepted;
        this.keptAt = now;
        return;
      }
      if (trial.rounds < TRIAL_ROUNDS) {
        // Not fallen (yet): maybe the cut is not under the limit, which a window at the limit's
        // onset (half before it) can make look so. Deeper while still throttled above the floor.
        trial.rounds++;
        trial.highest = Math.max(trial.highest, share);
        if (this.aboveChance(share, answered)) this.cutTo(accepted * 0.8, now);
        return;
      }
      // As many throttled at every lower rate: noise. Back to the rate before; the least share
      // seen is at most what the noise is.
      this.trial = undefined;
      this.undone++;
      this.rate = trial.before;
      this.floor = Math.max(this.floor, trial.lowest);
      this.lastRaise = now;
      return;
    }
    // A sparse window (fewer than `window` answers a second: a job's serial start, its listing)
    // measures little of a limit and much of chance: it starts a trial only on a quarter throttled.
    const starts = this.aboveChance(share, answered) && (!sparse || share >= 0.25);
    // The floor follows the quiet windows while nothing is paced (a moving average). While a
    // limit is paced it stays: the pace probes above the limit, and a floor that followed the
    // throttles rising there would never see it.
    if (this.rate === undefined && !starts) this.floor = this.floor * 0.9 + share * 0.1;
    // From the unpaced state a trial needs two such windows in a row: a window picked for being
    // throttled above chance overstates its share, and a trial judged against it alone "fell
    // clearly" by chance and kept the cut (1 in 3 of the 1,500-file runs under the mixed faults).
    // The lesser of the two is what the trial must fall from. A limit already paced is probed just
    // above, and one window is enough.
    const confirmed = this.rate !== undefined || this.suspect !== undefined;
    if (starts && !confirmed) {
      this.suspect = share;
      return;
    }
    if (starts) {
      const highest = Math.min(share, this.suspect ?? share);
      this.suspect = undefined;
      this.trial = { before: this.rate, highest, lowest: 1, accepted: 0, rounds: 1 };
      this.cutTo(accepted * 0.9, now);
      return;
    }
    this.suspect = undefined;
    // Paced at twice what the service accepts: the pace no longer binds. Unpaced again.
    if (this.rate !== undefined && this.rate > 2 * accepted) this.rate = undefined;
  }

  private cutTo(target: number, now: number): void {
    const to = Math.max(this.minRate, target);
    this.rate = this.rate === undefined ? to : Math.max(this.minRate, Math.min(this.rate, to));
    this.next = Math.max(this.next, now);
    this.lastRaise = now;
  }

  /**
   * Whether `share` of `n` answers throttled is more than the floor gives by chance. While nothing
   * is paced: at least 2, and as many as a binomial at the floor reaches in at most 1 % of windows
   * (exact; the normal approximation, at a floor of a few percent and 32 answers, let 4 of 32 at
   * 5 % noise start a trial in one window of 14, and each trial is a slower second). Once a limit
   * is paced, a margin of about 2.33 standard deviations (at least 1.5 throttles): the pace probes
   * just above the limit and must see it again quickly.
   */
  private aboveChance(share: number, n: number): boolean {
    const p = this.floor;
    if (this.rate === undefined) return Math.round(share * n) >= Math.max(2, criticalCount(n, p));
    return share > p + Math.max(1.5 / n, 2.33 * Math.sqrt((p * (1 - p)) / n));
  }

  /**
   * Regrowth without a cut, in CUBIC's shape around what the service accepted when the last cut
   * was kept (the ceiling): quick (50 % a second) below 90 % of it; for the first 3 s after the
   * cut a plateau (2 % a second) up to 110 %, where a limit found once most likely is again; then
   * probing (`growth`, 10 %). So a cut deeper than needed costs a second, a kept cut that was in
   * truth chance costs a few, and the pace dwells just under a real limit instead of climbing
   * straight back through it.
   */
  private raise(now: number): void {
    if (this.rate === undefined || this.trial) return;
    const seconds = (now - this.lastRaise) / 1000;
    this.lastRaise = now;
    const c = this.ceiling;
    const plateau = now - this.keptAt < PLATEAU_MS;
    if (this.rate < 0.9 * c) this.rate = Math.min(0.9 * c, this.rate * 1.5 ** seconds);
    else if (plateau && this.rate < 1.1 * c) this.rate = Math.min(1.1 * c, this.rate * 1.02 ** seconds);
    else this.rate *= this.growth ** seconds;
  }


}

/** Whether share `b` (of `nb` answers) lies clearly below share `a` (of `na`): a one-sided two-proportion test at about 1 %. */
function fellClearly(a: number, na: number, b: number, nb: number): boolean {
  const p = (a * na + b * nb) / (na + nb);
  return a - b > Math.max(0.02, 2.33 * Math.sqrt(p * (1 - p) * (1 / na + 1 / nb)));
}

/** The least k with P(X >= k) <= 1 % for X ~ Binomial(n, p). */
export function criticalCount(n: number, p: number): number {
  if (p <= 0) return 1;
  if (p >= 1) return n + 1;
  let pmf = (1 - p) ** n;
  let below = 0;
  for (let k = 0; k <= n; k++) {
    if (1 - below <= 0.01) return k;
    below += pmf;
    pmf *= ((n - k) / (k + 1)) * (p / (1 - p));
  }
  return n + 1;
}
