// A folder ferry pulled gives its documents their original names back: its record of names
// (`.ferry-names.jsonl`, written by the pull) maps each local path the pull had to change to the
// document's path, so that a mirror of the folder (the same project or another, another tenant, a
// fresh store on another machine) creates no document under a name the file system imposed, and
// `ferry check` compares the right names. The record itself is never uploaded, nor a download the
// pull kept to continue from (a `.ferry-…partial` file). Where the record is
// damaged, a path that looks mapped (a substitute character, a hash tag, `%2E`) and that the
// intact part does not list is a failed item: nothing goes up under a name ferry is not sure of.
import { decodeSegment, hasHashTag } from '../name-rules.js';

import { NAMES_FILE, readNamesFile, type NamesRecord } from '../names-record.js';
import type { Source, SourceEntry } from '../../sync/types.js';
import { mappedSource } from '../../sync/mapped-source.js';
import { looksPartial } from '../partials.js';
import { LinkRejectedError } from '../own-files.js';
import { HAS_CONTROL, hasControl } from '../names.js';
import { visible } from '../../text.js';

/** The source as it is, or, for a folder ferry pulled, with every mapped path given back. */
export async function withPulledNames(source: Source, root: string, opts: { carryControl?: boolean | undefined } = {}): Promise<Source> {
  const record = await readNamesFile(root).catch((err: unknown): NamesRecord => {
    // A link at the record's name is not read through: the folder is met as one whose record is damaged.
    if (err instanceof LinkRejectedError) return { header: undefined, names: new Map(), last: '', damagedAt: { line: 1, why: 'it is a link, not read through' } };
    throw err;
  });
  // A pull killed before it wrote its record may still have left a download to continue from.
  if (!record) return mappedSource(source, (entry) => keptDownload(entry) ?? entry, () => []);
  const given = { count: 0 };
  // The names the record gives back: a file someone put here under one of them is not the document.
  const restored = new Set(record.names.values());
  const map = (entry: SourceEntry): SourceEntry => restore(entry, record, restored, given, opts.carryControl === true);
  return mappedSource(source, map, () => [
    `a folder ferry pulled (its ${NAMES_FILE} says so): ${given.count} ${given.count === 1 ? 'path' : 'paths'} given back the name the document had` +
      (record.damagedAt ? `; the record is damaged from line ${record.damagedAt.line} (${record.damagedAt.why}): paths it no longer vouches for were not uploaded` : ''),
  ]);
}

function restore(entry: SourceEntry, record: NamesRecord, restored: ReadonlySet<string>, given: { count: number }, carryControl: boolean): SourceEntry {
  if (entry.key === NAMES_FILE) {
    return entry.kind === 'file' ? { kind: 'problem', key: entry.key, outcome: 'skipped', reason: "ferry's record of the names of a pulled folder: never uploaded" } : entry;
  }
  if (entry.kind === 'problem') return entry;
  const kept = keptDownload(entry);
  if (kept) return kept;
  const name = record.names.get(entry.key);
  if (name !== undefined) {
    // The name given back meets the rule of names as any other (an upload cannot carry a control character).
    if (!carryControl && hasControl(name)) return { kind: 'problem', key: name, outcome: 'failed', reason: HAS_CONTROL };
    given.count++;
    return { ...entry, key: name };
  }
  if (record.damagedAt && looksMapped(entry.key, record)) {
    return {
      kind: 'problem',
      key: entry.key,
      outcome: 'failed',
      reason: `"${visible(entry.key)}" looks like a name the pull mapped, and the folder's ${NAMES_FILE} is damaged from line ${record.damagedAt.line} (${record.damagedAt.why}): which document name it stands for is not sure, so it was not uploaded; pull the project again into a fresh folder, or rename the file to the name it should have`,
    };
  }
  // Not in the record: a file someone put here, under the name it has, unless a pulled file is given that name back.
  if (entry.kind === 'file' && restored.has(entry.key)) {
    return {
      kind: 'problem',
      key: entry.key,
      outcome: 'failed',
      reason: `a file here is named "${visible(entry.key)}", the name the folder's ${NAMES_FILE} gives back to a pulled file: the two cannot both be that document, so this one was not uploaded (rename it)`,
    };
  }
  return entry;
}

function looksMapped(key: string, record: NamesRecord): boolean {
  return key.split('/').some((segment) => hasHashTag(segment) || /%2E|%00/.test(segment) || (record.header?.rules !== 'posix' && decodeSegment(segment) !== segment));
}

/** A pull's temporary file (partials.ts): skipped, said, never a document. */
function keptDownload(entry: SourceEntry): SourceEntry | undefined {
  if (entry.kind !== 'file' || !looksPartial(entry.key.slice(entry.key.lastIndexOf('/') + 1))) return undefined;
  return { kind: 'problem', key: entry.key, outcome: 'skipped', reason: "a pull's temporary file (a download that stopped part-way, kept for the pull to continue from): never uploaded" };
}
