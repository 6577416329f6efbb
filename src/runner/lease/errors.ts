// How a lease fails, as values: each error carries a reason code with the facts of it. Its message
// says what happened in the protocol's terms, for logs and for any caller; the words a person acts
// on (which flag to give, which command breaks a lease) are the CLI's, made from the reason
// (src/cli/lease-words.ts). No flag of the command line is named here.
import { FerryError } from '../../errors.js';
import type { Mark } from '../../marks.js';

/** Who holds a lease, as a refused run names it. */
export interface LeaseHolder {
  host: string;
  pid: number;
  job: string;
  /** The holder's run token. */
  run: string;
  path: string;
  /** The service's time of its claim, ISO. */
  since: string;
  /** The service's time of its latest record, ISO. */
  renewed: string;
  ttlMs: number;
  /** Why this holder could not be judged by this ferry, if so (a newer protocol, an unreadable record). */
  note?: string;
}

export type LeaseLoss =
  /** The service's time between two of this holder's records exceeded the TTL: another run may have taken over. */
  | { how: 'gap'; gapMs: number; ttlMs: number }
  /** The claim is gone from the service: removed by a run that judged this one expired, or broken by an operator. */
  | { how: 'broken'; ttlMs: number; successor?: LeaseHolder }
  /** Renewals failed for more than twice the TTL. */
  | { how: 'unrenewed'; failingMs: number; error: string };

export type LeaseReason =
  /** Another run holds it (after the wait asked for, if any). */
  | { code: 'held'; holder: LeaseHolder; waitedMs: number; breakHint?: string | undefined }
  /** This run held it and holds it no more: it writes nothing more. */
  | ({ code: 'lost' } & LeaseLoss)
  /** Claims kept being removed before they could be judged: the service answers too slowly for the TTL. */
  | { code: 'contended'; times: number; ttlMs: number }
  /** The service did not list a claim it had just made, and no listing lag was allowed for. */
  | { code: 'unlisted' }
  /** A record without a time of the service's: the protocol cannot decide. */
  | { code: 'undated'; record: string; value: string }
  /** A TTL outside what the protocol can renew within. */
  | { code: 'ttl-range'; ttlMs: number; minMs: number; maxMs: number }
  /** The run was stopped while it waited. */
  | { code: 'stopped' }
  /** The lease could not be started for a reason of the service's (the target missing, writes refused), said whole. */
  | { code: 'denied'; said: string; writesDenied?: boolean };

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

/** Who holds it, as the facts name a holder. */
export function holderText(h: LeaseHolder): string {
  return `${h.job} run ${h.run} on host ${h.host} (pid ${h.pid})`;
}

/** What happened, in the protocol's terms. */
export function leaseFacts(on: string, reason: LeaseReason): string {
  switch (reason.code) {
    case 'held': {
      const h = reason.holder;
      return (
        `another run holds the lease on ${on} on the service: ${holderText(h)}, since ${h.since}, last renewed ${h.renewed}${h.note ? ` (${h.note})` : ''}; ` +
        `${reason.waitedMs > 0 ? `waited ${seconds(reason.waitedMs)}` : 'not waiting'}; a holder that is gone stops holding it ${seconds(h.ttlMs)} after its last renewal`
      );
    }
    case 'lost':
      switch (reason.how) {
        case 'gap':
          return `the lease on ${on} was not renewed for ${seconds(reason.gapMs)} of the service's time (its TTL is ${seconds(reason.ttlMs)}; was this process stopped or cut off?): another run may hold it now, so this run writes nothing more`;
        case 'broken': {
          const s = reason.successor;
          return (
            `the lease on ${on} is no longer this run's: its claim was removed from the service${s ? `, and ${holderText(s)} holds it since ${s.since}` : ''} ` +
            `(another run takes it over once this one goes unrenewed past its TTL of ${seconds(reason.ttlMs)}, e.g. while stopped, and an operator may break it): this run writes nothing more`
          );
        }
        case 'unrenewed':
          return `the lease on ${on} could not be renewed for ${seconds(reason.failingMs)} (${reason.error}): this run writes nothing more`;
      }
      break;
    case 'contended':
      return `the lease claims made on ${on} were removed by other runs before they could be judged, ${reason.times} times: the service answers too slowly for a lease of ${seconds(reason.ttlMs)}`;
    case 'unlisted':
      return `the service did not list the lease record it had just created on ${on}: a lease cannot be decided on a listing that misses records`;
    case 'undated':
      return `the service gave a lease record (${reason.record}) no readable dateAdded ("${reason.value}"): a lease is decided by the service's order and time, and cannot be here`;
    case 'ttl-range':
      return `a lease TTL of ${reason.ttlMs} ms cannot be used: it must be between ${reason.minMs / 1000} s and ${reason.maxMs / 60_000} min (renewals come every quarter of it)`;
    case 'stopped':
      return `stopped while waiting for the lease on ${on}`;
    case 'denied':
      return reason.said;
  }
}

/** The lease could not be had, or was lost: the reason says which. */
export class LeaseError extends FerryError {
  constructor(
    /** What the lease is on (a project and folder, a migration…). */
    readonly on: string,
    readonly reason: LeaseReason,
  ) {
    super(leaseFacts(on, reason));
  }
  override get mark(): Mark {
    return 'fatal';
  }
}

/** Another run holds the lease (after the wait asked for, if any). */
export class LeaseHeldError extends LeaseError {
  declare readonly reason: Extract<LeaseReason, { code: 'held' }>;
  constructor(on: string, holder: LeaseHolder, waitedMs: number, breakHint?: string) {
    super(on, { code: 'held', holder, waitedMs, breakHint });
  }
  get holder(): LeaseHolder {
    return this.reason.holder;
  }
  get waitedMs(): number {
    return this.reason.waitedMs;
  }
  get breakHint(): string | undefined {
    return this.reason.breakHint;
  }
}

/** The holder no longer holds the lease: it writes nothing more. */
export class LeaseLostError extends LeaseError {
  declare readonly reason: Extract<LeaseReason, { code: 'lost' }>;
  constructor(on: string, loss: LeaseLoss) {
    super(on, { code: 'lost', ...loss });
  }
}
