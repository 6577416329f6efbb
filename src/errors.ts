// The base of every error ferry throws, at the ground floor so that every room (the engine
// included) can raise and recognise one without importing the HTTP client. Each carries a mark
// (./marks.ts): the item's own fault unless a subclass says otherwise.
import type { Mark } from './marks.js';

/** Base of every error ferry throws. */
export class FerryError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }

  /** What this failure means for the work: the item's own fault unless a subclass says otherwise. */
  get mark(): Mark {
    return 'item';
  }
}

/** The client was given settings it cannot work with (unknown region, missing URL...). */
export class ConfigurationError extends FerryError {}
