// The lease as a person at the command line reads it: made from the reason a lease error or event
// carries (src/runner/lease/errors.ts), with the flags and commands that act on it. The protocol's
// own messages name no flag; these words are added where ferry speaks to its user.
import { LeaseError, type LeaseEvent, type LeaseLoss, type LeaseReason } from '../runner/lease.js';
import { LeaseTtlError } from '../runner/lease/ttl.js';
import { formatLag } from '../api/listing-lag.js';
import { writeStderr } from '../runner/terminal.js';
import { safeText } from '../text.js';
import { shellWord } from './shell-words.js';
import { SETTINGS } from '../settings/declared.js';

/** What the user can do about a lease failure, by its reason; undefined when there is nothing to add. */
export function leaseAdvice(reason: LeaseReason): string | undefined {
  switch (reason.code) {
    case 'held': {
      const wait = reason.waitedMs > 0 ? 'a longer --wait-lock waits longer' : '--wait-lock DURATION waits for it';
      return `${wait}${reason.breakHint ? `; to break it now: ${reason.breakHint}` : ''}`;
    }
    case 'lost':
      return lostAdvice(reason.how);
    case 'contended':
      return 'raise --lock-ttl; --no-lock runs without a lease';
    case 'unlisted':
      return '--listing-lag sets how late the service may list; --no-lock runs without a lease';
    case 'undated':
      return '--no-lock runs without a lease';
    case 'ttl-range':
      return `--lock-ttl must be ${SETTINGS.lockTtl.range?.words}`;
    case 'denied':
      return reason.writesDenied ? 'ferry doctor says what a profile may do' : undefined;
    default:
      return undefined;
  }
}

/** The command that breaks a lease on this project (or the tenant) and path, as a shell takes it. */
export function breakCommand(target: { project?: string | undefined; path: string }): string {
  return `ferry lock break${target.project ? ` --project ${shellWord(target.project)}` : ''}${target.path ? ` --path ${shellWord(target.path)}` : ''}`;
}

/** What to do about a lease lost, by how it was lost (a run's summary carries the how). */
export function lostAdvice(how: LeaseLoss['how'] | undefined): string | undefined {
  if (how === 'gap') return '--lock-ttl sets how long a lease outlives a renewal that does not come';
  if (how === 'broken') return '`ferry lock status` shows who holds it now; `ferry lock break` is how an operator removes a lease';
  return undefined;
}

/** An error's message as the user reads it: a lease's with its advice, any other as it is. */
export function userMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof LeaseTtlError) return `${message} (give --lock-ttl ${formatLag(err.leastMs)} or more, or leave --lock-ttl out; --listing-lag sets the lag)`;
  if (!(err instanceof LeaseError)) return message;
  const advice = leaseAdvice(err.reason);
  return advice ? `${message} (${advice})` : message;
}

/** What the operator hears at once, not only in the summary: a wait begun, a lease lost, a lag beyond the bound. */
export function leaseEventsOnStderr(): (event: LeaseEvent) => void {
  let waiting = false;
  return (event) => {
    if (event.type === 'lost' || event.type === 'lagged') writeStderr(`ferry: ${safeText(userMessage(event.error))}\n`);
    if (event.type === 'waiting' && !waiting) {
      waiting = true;
      const h = event.holder;
      writeStderr(`ferry: another run holds the lease (${safeText(`${h.job} run ${h.run} on host ${h.host}, pid ${h.pid}, since ${h.since}`)}): waiting for it (--wait-lock)\n`);
    }
  };
}
