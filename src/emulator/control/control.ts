// What a test may do to a running emulator, once: the in-process handle's methods and the HTTP
// control API (./routes.ts) both call these, so that a Python suite and a vitest suite move the
// same levers. Each step says what was wrong in an HttpError (400, 404, 409): the routes send it as
// a problem, the handle throws it.
import type Database from 'better-sqlite3';
import type { EventEmitter } from 'node:events';
import type { Clock } from '../service/clock.js';
import { type EmulatorModes, HttpError } from '../context.js';
import { type FaultSettings, type FaultInjector, parseFaultSpec } from '../service/faults.js';
import type { Traffic } from '../http/guards.js';
import type { DocumentProcessor, ProcessingDelays } from '../service/processing.js';
import { applySeed, type SeedData, type TenantDescription } from '../service/seed.js';
import type { StateGate } from '../http/state-gate.js';
import type { KeptBlobStore } from '../state/blobs.js';
import type { Stores } from '../state/index.js';
import type { ListingLag } from '../state/listing-lag.js';
import { replaceData, type SnapshotInfo, type Snapshots } from '../state/snapshots.js';
import { MODE_CHOICES as CHOICES } from '../mode-choices.js';

/** The modes fixed when the emulator starts: they decide which routes exist, or how every stored time was cut. */
export const FIXED_MODES = ['folders', 'contentRoute', 'timeResolutionMs'] as const;
type FixedMode = (typeof FIXED_MODES)[number];
export type ChangeableModes = Omit<EmulatorModes, FixedMode>;

/** The page cap (`--max-page-size`), which may also change while running. */
export interface PageCap {
  max?: number | undefined;
}

/** How the emulator started: what `reset` goes back to besides the seed. */
export interface StartSettings {
  faults: FaultSettings | string;
  listingLagMs: number;
  modes: EmulatorModes;
  processing: ProcessingDelays;
  maxPageSize?: number | undefined;
}

export interface ControlDependencies {
  db: Database.Database;
  stores: Stores;
  blobs: KeptBlobStore;
  gate: StateGate;
  processor: DocumentProcessor;
  faults: FaultInjector;
  listingLag: ListingLag;
  clock: Clock;
  modes: EmulatorModes;
  pageCap: PageCap;
  snapshots: Snapshots;
  events: EventEmitter;
  traffic: () => Traffic;
  /** The seed the state was first made from. */
  seed: SeedData;
  /** Stores the tenants' description the ready line gives. */
  describeTenants(tenants: TenantDescription[]): void;
  start: StartSettings;
}

export class Control {
  constructor(private readonly deps: ControlDependencies) {}

  /** Back to how the process started: the seed's data, no snapshot's, and the start's faults, lag, modes, delays and page cap. The clock does not go back. */
  reset(): void {
    const { db, stores, blobs, clock } = this.deps;
    this.replaceState(() => {
      replaceData(db, () => this.deps.describeTenants(applySeed(stores, this.deps.seed, clock.nowIso())));
      blobs.clear();
    });
    const { start } = this.deps;
    this.setFaults(start.faults);
    this.setListingLag(start.listingLagMs);
    this.setModes(changeable(start.modes));
    this.setProcessing(start.processing);
    this.deps.pageCap.max = start.maxPageSize;
  }

  snapshots(): SnapshotInfo[] {
    return this.deps.snapshots.list();
  }

  takeSnapshot(name: unknown, replace = false): SnapshotInfo {
    return this.deps.snapshots.take(name as string, this.deps.clock.nowIso(), replace);
  }

  restoreSnapshot(name: string): SnapshotInfo {
    return this.replaceState(() => this.deps.snapshots.restore(name));
  }

  deleteSnapshot(name: string): void {
    this.deps.snapshots.remove(name);
  }

  /** A spec in the --faults syntax, or settings; what does not parse is a 400 naming it. */
  setFaults(settings: unknown): void {
    if (typeof settings !== 'string' && (typeof settings !== 'object' || settings === null)) throw bad(`faults need a spec string such as "503=1" (the --faults syntax), not ${JSON.stringify(settings)}`);
    try {
      this.deps.faults.set(typeof settings === 'string' ? parseFaultSpec(settings) : (settings as FaultSettings));
    } catch (error) {
      throw bad((error as Error).message);
    }
  }

  clearFaults(): void {
    this.deps.faults.set({});
  }

  setListingLag(ms: unknown): void {
    this.deps.listingLag.set(duration('ms', ms));
  }

  modes(): { modes: EmulatorModes & { maxPageSize: number | null }; fixed: readonly string[] } {
    return { modes: { ...this.deps.modes, maxPageSize: this.deps.pageCap.max ?? null }, fixed: FIXED_MODES };
  }

  /** Changes the modes named; a fixed one, an unknown one or a value that is not one of its choices is a 400, and then none changes. */
  setModes(changes: unknown): void {
    if (typeof changes !== 'object' || changes === null || Array.isArray(changes)) throw bad('modes are a JSON object of mode names and values');
    const next: Record<string, unknown> = {};
    let pageCap: number | undefined | null;
    for (const [name, value] of Object.entries(changes)) {
      if ((FIXED_MODES as readonly string[]).includes(name)) throw bad(`the mode ${name} is fixed when the emulator starts (it decides which routes exist, or how stored times were cut); restart it with the flag`);
      if (name === 'maxPageSize') {
        if (value !== null && !(Number.isInteger(value) && (value as number) >= 1)) throw bad(`maxPageSize must be a whole number of at least 1, or null for no cap, not ${JSON.stringify(value)}`);
        pageCap = value as number | null;
        continue;
      }
      const choices = MODE_CHOICES[name as keyof ChangeableModes];
      if (!choices) throw bad(`there is no mode ${JSON.stringify(name)} (modes: ${[...Object.keys(MODE_CHOICES), 'maxPageSize'].join(', ')})`);
      const ok = choices === 'seconds' ? Number.isInteger(value) && (value as number) >= 1 : (choices as readonly unknown[]).includes(value);
      if (!ok) throw bad(`the mode ${name} is ${choices === 'seconds' ? 'a whole number of seconds, at least 1' : `one of ${choices.join(', ')}`}, not ${JSON.stringify(value)}`);
      next[name] = value;
    }
    Object.assign(this.deps.modes, next);
    if (pageCap !== undefined) this.deps.pageCap.max = pageCap ?? undefined;
  }

  processing(): ProcessingDelays {
    return this.deps.processor.settings;
  }

  setProcessing(delays: unknown): void {
    const given = (typeof delays === 'object' && delays !== null ? delays : {}) as Partial<Record<keyof ProcessingDelays, unknown>>;
    const now = this.deps.processor.settings;
    try {
      this.deps.processor.setDelays({
        minDelayMs: (given.minDelayMs ?? now.minDelayMs) as number,
        maxDelayMs: (given.maxDelayMs ?? now.maxDelayMs) as number,
      });
    } catch (error) {
      throw bad((error as Error).message);
    }
  }

  /** Processes every pending document now; how many there were. */
  drain(): Promise<number> {
    return this.deps.processor.drain();
  }

  /** Moves the clock forward: token lifetimes, dates, lease ages and link expiry follow it. */
  advanceClock(ms: unknown): string {
    this.deps.clock.advance(duration('ms', ms));
    return this.deps.clock.nowIso();
  }

  setCredits(tenant: string, credits: unknown): void {
    if (typeof credits !== 'number' || !Number.isFinite(credits)) throw bad(`credits must be a number, not ${JSON.stringify(credits)}`);
    this.credits(tenant);
    this.deps.stores.tenants.setCredits(tenant, credits);
  }

  credits(tenant: string): number {
    try {
      return this.deps.stores.tenants.credits(tenant);
    } catch {
      throw new HttpError(404, 'Not Found', `No tenant named ${JSON.stringify(tenant)}.`);
    }
  }

  traffic(): Traffic {
    return this.deps.traffic();
  }

  /** The state swapped in one synchronous step, then the work it holds started as after a restart. */
  private replaceState<T>(swap: () => T): T {
    const result = this.deps.gate.replace(swap);
    this.deps.processor.restart();
    this.deps.events.emit('stateReplaced', {});
    return result;
  }
}

/** Each changeable mode's choices (mode-choices.ts), held here to the modes' own types. */
const MODE_CHOICES: { [K in keyof ChangeableModes]: readonly ChangeableModes[K][] | 'seconds' } = CHOICES;

function changeable(modes: EmulatorModes): Partial<ChangeableModes> {
  return Object.fromEntries(Object.keys(MODE_CHOICES).map((name) => [name, modes[name as keyof ChangeableModes]]));
}

function duration(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw bad(`${name} must be a number of milliseconds, 0 or more, not ${JSON.stringify(value)}`);
  return value;
}

function bad(detail: string): HttpError {
  return new HttpError(400, 'Bad Request', detail);
}
