// What a metadata-only change would change: the keys and settings a document carries now against
// those its entry asks for. A dry run names them ("Kunde: "Müller" -> "Müller GmbH""), since the
// service keeps every version for good and a person should see what a new one would say.
import type { EntryAttributes } from './types.js';

export interface AttributeChange {
  key: string;
  /** null: absent. */
  was: string | null;
  now: string | null;
}

/** How many metadata-only changes a dry run explains key by key: each costs the destination a look. */
export const EXPLAINED = 100;

/** The processing settings an entry may ask for; one the entry leaves out keeps the service's default, so is no change. */
const SETTING_KEYS = ['ocrStrategy', 'ocrEngine', 'coordinateExtractionStrategy'] as const;

/** The keys and settings `now` gives otherwise than `was`, in a person's alphabetical order; ferry's own keys are not compared. */
export function attributeChanges(was: EntryAttributes | undefined, now: EntryAttributes | undefined): AttributeChange[] {
  const before = flat(was);
  const after = flat(now);
  const changes: AttributeChange[] = [];
  for (const [key, value] of after) if (before.get(key) !== value) changes.push({ key, was: before.get(key) ?? null, now: value });
  for (const [key, value] of before) if (!after.has(key) && !(SETTING_KEYS as readonly string[]).includes(key)) changes.push({ key, was: value, now: null });
  return changes.sort((a, b) => a.key.localeCompare(b.key, 'en'));
}

function flat(a: EntryAttributes | undefined): Map<string, string> {
  const out = new Map<string, string>();
  // An empty value is no value (manifest/index.ts, attributesDigest): never a change of its own.
  for (const [k, v] of Object.entries(a?.metadata ?? {})) if (!k.startsWith('ferry.') && v !== '') out.set(k, v);
  for (const k of SETTING_KEYS) {
    const v = a?.[k];
    if (v !== undefined) out.set(k, v);
  }
  return out;
}
