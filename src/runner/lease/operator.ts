// The operator's view of a scope's records (`ferry lock status|break`): who holds what, and which
// records belong to whom.
import { DEFAULT_LEASE_TTL_MS, type LeaseHolder, type LeaseRecord } from './protocol.js';
import { claimantOf, holderOf } from './judge.js';

/** The records of a scope, by owner, as the operator sees them (`ferry lock status|break`). */
export interface LeaseEntry {
  /** Undefined for beats whose claim is gone (left by a release or a break cut short). */
  holder?: LeaseHolder;
  records: string[];
}

export function leaseEntries(records: readonly LeaseRecord[]): LeaseEntry[] {
  const byOwner = new Map<string, LeaseRecord[]>();
  for (const r of records) {
    const owner = r.body ? r.body.owner : `unreadable:${r.id}`;
    byOwner.set(owner, [...(byOwner.get(owner) ?? []), r]);
  }
  const entries: LeaseEntry[] = [];
  for (const [owner, list] of byOwner) {
    const claimant = claimantOf(owner, list, Infinity, DEFAULT_LEASE_TTL_MS);
    entries.push({ ...(claimant ? { holder: holderOf(claimant) } : {}), records: list.map((r) => r.id) });
  }
  return entries.sort((a, b) => (a.holder?.since ?? '').localeCompare(b.holder?.since ?? ''));
}
