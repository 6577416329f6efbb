// Fault injection: seeded, reproducible HTTP failures, resets and latency, plus
// document processing failures, so clients' retry and exactly-once logic can be tested.
import { seededRandom, type Random } from './random.js';
import { UPLOAD_FAILED_REASONS, type UploadFailedReason } from '../state/documents.js';

export const HTTP_FAULT_KINDS = ['400', '403', '404', '429', '500', '501', '502', '503', 'reset', 'reset-after'] as const;
/** `404`: as if the resource had just been deleted (a document gone between a listing and its download). `reset`: the connection drops before the request is handled; `reset-after`: after the handler ran (the work happened). */
export type HttpFaultKind = (typeof HTTP_FAULT_KINDS)[number];

export interface FaultRule {
  kind: HttpFaultKind | 'latency';
  method?: string;
  /** Exact path (no query) or a pattern tested against it. */
  path?: string | RegExp;
  /** Default 1. */
  probability?: number;
  /** Fires at most this many times (default: unlimited). */
  times?: number;
  /** Lets this many matching requests through before it fires at all (default 0): a fault on the second listing, not the first. */
  skip?: number;
  /** For kind `latency`. */
  latencyMs?: number;
}

export interface FaultSettings {
  /** Per-request probabilities; never applied to the token endpoint. */
  probabilities?: Partial<Record<HttpFaultKind, number>>;
  /** Added to every request (except the token endpoint). */
  latencyMs?: number;
  seed?: number;
  /** Targeted faults, checked before the probabilities (these may target the token endpoint). */
  rules?: FaultRule[];
  /** Per-document probability of each processing failure reason. */
  failReasons?: Partial<Record<UploadFailedReason, number>>;
  /**
   * Per-download probability that a content response (200 or 206) carries one byte flipped: the
   * same length and status, as a faulty proxy, cache or NIC would serve it. Drawn apart from the
   * HTTP faults, which end a request; this one lets it succeed wrongly.
   */
  corrupt?: number;
}

export interface FaultDecision {
  kind?: HttpFaultKind;
  latencyMs: number;
}

const FAIL_PREFIX = 'fail.';

/** Parses `429=0.05,500=0.01,reset=0.02,reset-after=0.01,latency=20,seed=7,fail.uploadFailure=0.1,corrupt=0.5` strictly. */
export function parseFaultSpec(spec: string): FaultSettings {
  const settings: FaultSettings = { probabilities: {}, failReasons: {} };
  for (const entry of spec.split(',').map((part) => part.trim()).filter(Boolean)) {
    const [key, value, extra] = entry.split('=').map((part) => part.trim());
    if (!key || value === undefined || value === '' || extra !== undefined) throw new Error(`Fault "${entry}" is not KIND=VALUE`);
    if ((HTTP_FAULT_KINDS as readonly string[]).includes(key)) {
      settings.probabilities![key as HttpFaultKind] = probability(key, value);
    } else if (key === 'latency') {
      settings.latencyMs = wholeNumber(key, value);
    } else if (key === 'seed') {
      settings.seed = wholeNumber(key, value);
    } else if (key === 'corrupt') {
      settings.corrupt = probability(key, value);
    } else if (key.startsWith(FAIL_PREFIX) && (UPLOAD_FAILED_REASONS as readonly string[]).includes(key.slice(FAIL_PREFIX.length))) {
      settings.failReasons![key.slice(FAIL_PREFIX.length) as UploadFailedReason] = probability(key, value);
    } else {
      const known = [...HTTP_FAULT_KINDS, 'latency', 'seed', 'corrupt', ...UPLOAD_FAILED_REASONS.map((r) => FAIL_PREFIX + r)];
      throw new Error(`Unknown fault kind "${key}" (known: ${known.join(', ')})`);
    }
  }
  checkTotals(settings);
  return settings;
}

function probability(key: string, text: string): number {
  const value = Number(text);
  if (!/^\d*\.?\d+$/.test(text) || !(value >= 0 && value <= 1)) {
    throw new Error(`Fault "${key}" needs a probability between 0 and 1, got "${text}"`);
  }
  return value;
}

function wholeNumber(key: string, text: string): number {
  if (!/^\d+$/.test(text)) throw new Error(`Fault "${key}" needs a whole number, got "${text}"`);
  return Number(text);
}

function checkTotals(settings: FaultSettings): void {
  const sum = (values: object) => Object.values(values).reduce((total: number, p) => total + (p as number), 0);
  if (sum(settings.probabilities ?? {}) > 1) throw new Error('The HTTP fault probabilities add up to more than 1');
  if (sum(settings.failReasons ?? {}) > 1) throw new Error('The processing failure probabilities add up to more than 1');
}

/** Holds the current settings; decides per request and per document. */
export class FaultInjector {
  private settings: FaultSettings = {};
  private random: Random = seededRandom(0);
  private remaining = new Map<FaultRule, number>();
  private skipped = new Map<FaultRule, number>();

  constructor(settings: FaultSettings | string = {}) {
    this.set(settings);
  }

  /** Replaces the settings and restarts the seeded sequence. */
  set(settings: FaultSettings | string): void {
    this.settings = typeof settings === 'string' ? parseFaultSpec(settings) : settings;
    checkTotals(this.settings);
    this.random = seededRandom(this.settings.seed ?? 1);
    this.remaining = new Map((this.settings.rules ?? []).map((rule) => [rule, rule.times ?? Infinity]));
    this.skipped = new Map((this.settings.rules ?? []).map((rule) => [rule, rule.skip ?? 0]));
  }

  decide(method: string, path: string, isTokenEndpoint: boolean): FaultDecision {
    const decision: FaultDecision = { latencyMs: isTokenEndpoint ? 0 : (this.settings.latencyMs ?? 0) };
    for (const rule of this.settings.rules ?? []) {
      if (!this.matches(rule, method, path) || !this.fires(rule.probability ?? 1)) continue;
      this.remaining.set(rule, (this.remaining.get(rule) ?? 0) - 1);
      if (rule.kind === 'latency') {
        decision.latencyMs += rule.latencyMs ?? 0;
      } else {
        decision.kind = rule.kind;
        return decision;
      }
    }
    if (!isTokenEndpoint) decision.kind = this.pick(this.settings.probabilities ?? {}) as HttpFaultKind | undefined;
    return decision;
  }

  /** A processing failure drawn from `failReasons`, if any fires for this document. */
  processingFailure(): UploadFailedReason | undefined {
    return this.pick(this.settings.failReasons ?? {}) as UploadFailedReason | undefined;
  }

  /** Whether this content response is served with one byte flipped (`corrupt`). */
  corruptsContent(): boolean {
    const p = this.settings.corrupt ?? 0;
    return p > 0 && this.fires(p);
  }

  private matches(rule: FaultRule, method: string, path: string): boolean {
    if ((this.remaining.get(rule) ?? 0) <= 0) return false;
    if (rule.method && rule.method.toUpperCase() !== method) return false;
    if (rule.path !== undefined && !(typeof rule.path === 'string' ? rule.path === path : rule.path.test(path))) return false;
    const skip = this.skipped.get(rule) ?? 0;
    if (skip > 0) {
      this.skipped.set(rule, skip - 1);
      return false;
    }
    return true;
  }

  private fires(probability: number): boolean {
    return probability >= 1 || this.random() < probability;
  }

  /** One draw against the cumulative probabilities, so a run's sequence depends only on the seed. */
  private pick(probabilities: Record<string, number | undefined>): string | undefined {
    const entries = Object.entries(probabilities).filter(([, p]) => (p ?? 0) > 0);
    if (entries.length === 0) return undefined;
    let draw = this.random();
    for (const [kind, p] of entries) {
      draw -= p as number;
      if (draw < 0) return kind;
    }
    return undefined;
  }
}
