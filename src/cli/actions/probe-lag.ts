// `ferry doctor --probe-lag`: how late the service lists a new item, measured on the service
// itself. A canary project is made, the list and the search are read until both show it, then it
// is removed and they are read until neither does; a few rounds, the worst kept, and the bound to
// give ferry (--listing-lag) said. The canary is removed whatever happens, Ctrl-C included.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FerryClient } from '../../api/client.js';
import { PermissionDeniedError } from '../../api/errors.js';
import { ConfigurationError } from '../../errors.js';
import { formatLag } from '../../api/listing-lag.js';

/** Canary projects are named so, and say what they are in their description. */
export const CANARY_PREFIX = '.ferry-probe ';
const ROUNDS = 3;
/** How often the list and the search are read while waiting. */
const POLL_MS = 100;
/** A canary not listed (or not gone) after this long is reported as such: the probe never waits for ever. */
const GIVE_UP_MS = 120_000;

export interface LagRound {
  /** From the create's answer to the start of the first listing that showed it, ms (null: not within the give-up time). */
  listedMs: number | null;
  searchedMs: number | null;
  /** From the removal's answer to the start of the first listing and search that no longer showed it. */
  goneMs: number | null;
}

export interface LagProbe {
  rounds: LagRound[];
  /** The worst of every figure, ms (null when something never showed). */
  worstMs: number | null;
  /** The bound to set: the worst with half again as margin, in whole seconds (0 when the service lists at once). */
  suggested: string | null;
  canary: { created: number; removed: number };
}

export async function probeListingLag(client: FerryClient, signal: AbortSignal, roundCount = ROUNDS): Promise<LagProbe> {
  const rounds: LagRound[] = [];
  const canary = { created: 0, removed: 0 };
  for (let i = 0; i < roundCount && !signal.aborted; i++) rounds.push(await oneRound(client, canary, signal));
  const figures = rounds.flatMap((r) => [r.listedMs, r.searchedMs, r.goneMs]);
  const worstMs = figures.some((f) => f === null) ? null : Math.max(0, ...(figures as number[]));
  return { rounds, worstMs, suggested: worstMs === null ? null : worstMs < POLL_MS ? '0' : `${Math.ceil((worstMs * 1.5) / 1000)}s`, canary };
}

async function oneRound(client: FerryClient, canary: LagProbe['canary'], signal: AbortSignal): Promise<LagRound> {
  const name = `${CANARY_PREFIX}${randomUUID()}`;
  let id: string;
  try {
    // Who made it, so that a canary a `kill -9` left is removed by the next probe from this host (probe.ts).
    const description = JSON.stringify({ note: 'made by `ferry doctor --probe-lag` to measure how late the service lists a new item; removed by it at once', host: hostname(), pid: process.pid });
    id = (await client.projects.create({ name, description })).objectIdentifier;
  } catch (err) {
    if (err instanceof PermissionDeniedError) throw new ConfigurationError('ferry doctor --probe-lag needs a client that can write: it creates a canary project and removes it again, and this profile\'s client is read-only (403). Run it with a writing profile (-p NAME)');
    throw err;
  }
  canary.created++;
  const createdAt = performance.now();
  process.stderr.write(`ferry: canary project ${id} made (${name}); removed at the end of its round\n`);
  try {
    const listed = until(() => inList(client, name), true, createdAt, signal);
    const searched = until(() => inSearch(client, name), true, createdAt, signal);
    const [listedMs, searchedMs] = await Promise.all([listed, searched]);
    await client.projects.delete(id);
    canary.removed++;
    const removedAt = performance.now();
    const gone = await Promise.all([until(() => inList(client, name), false, removedAt, signal), until(() => inSearch(client, name), false, removedAt, signal)]);
    const goneMs = gone.some((g) => g === null) ? null : Math.max(...(gone as number[]));
    return { listedMs, searchedMs, goneMs };
  } finally {
    if (canary.removed < canary.created) {
      await client.projects.delete(id).catch(() => undefined);
      canary.removed++;
    }
  }
}

/** Ms from `since` to the start of the first look that answered `wanted` (null: not within the give-up time, or stopped). */
export async function until(look: () => Promise<boolean>, wanted: boolean, since: number, signal: AbortSignal): Promise<number | null> {
  for (;;) {
    const startedAt = performance.now();
    if ((await look()) === wanted) return Math.round(startedAt - since);
    if (signal.aborted || performance.now() - since > GIVE_UP_MS) return null;
    await sleep(POLL_MS, undefined, { signal }).catch(() => undefined);
  }
}

/** The newest projects, as a plain list shows them (the canary is the newest). */
async function inList(client: FerryClient, name: string): Promise<boolean> {
  const page = await client.projects.list({ sorting: 'dateAdded', desc: true }, { leaseRecords: true }).page(1, 50);
  return page.items.some((p) => p.name === name);
}

async function inSearch(client: FerryClient, name: string): Promise<boolean> {
  const page = await client.projects.list({ searchText: name }, { leaseRecords: true }).page(1, 50);
  return page.items.some((p) => p.name === name);
}

/** The probe as lines for a person. */
export function describeProbe(p: LagProbe): string[] {
  const f = (ms: number | null) => (ms === null ? `not within ${GIVE_UP_MS / 1000} s` : formatLag(ms));
  const lines = p.rounds.map((r, i) => `round ${i + 1}: listed after ${f(r.listedMs)}, found by search after ${f(r.searchedMs)}, gone from both ${f(r.goneMs)} after its removal`);
  lines.push(
    p.worstMs === null
      ? `worst: a canary was not listed (or not gone) within ${GIVE_UP_MS / 1000} s: ferry cannot be given a bound for this service; run with --no-lock only where no other run writes`
      : p.suggested === '0'
        ? `worst: ${formatLag(p.worstMs)}: the service lists new items at once; --listing-lag 0 (the default) is right`
        : `worst: ${formatLag(p.worstMs)}: set --listing-lag ${p.suggested} (or listingLag: ${p.suggested} in the profile, FERRY_LISTING_LAG=${p.suggested})`,
  );
  lines.push(`canary projects: ${p.canary.created} created, ${p.canary.removed} removed`);
  return lines;
}
