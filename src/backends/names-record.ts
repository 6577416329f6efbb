// The pull's record of names, `.ferry-names.jsonl` in the pulled folder: what a restore needs to
// give every document its original name travels with the folder, not only in the checkpoint
// store (a fresh machine, another tenant). One header line (the rules the folder was written
// under), then one line per path whose local form is not the document's own path. Each line's
// `sum` chains the one before it, so a line edited by hand, or any but the last lines removed, is
// seen: the record is then damaged from that line on, and a restore maps back only what it is
// sure of. The file is never uploaded (the folder source skips it, said).
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, renameSync, rmSync, writeSync } from 'node:fs';
import { besideName, createNew, openOwn, rejectLinkAt } from './own-files.js';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import type { NameRules } from './name-rules.js';

export const NAMES_FILE = '.ferry-names.jsonl';
const VERSION = 1;

export interface NamesHeader {
  ferry: 'local names';
  version: number;
  rules: NameRules;
  caseInsensitive: boolean;
}

function chain(previous: string, local: string, name: string): string {
  return createHash('sha256').update(`${previous}\0${local}\0${name}`).digest('hex').slice(0, 16);
}

export interface NamesRecord {
  header: NamesHeader | undefined;
  /** Local path -> the document's path, for every line that checked out. */
  names: Map<string, string>;
  /** The line from which the record is not to be trusted (edited, cut, not JSON), if any. */
  damagedAt?: { line: number; why: string };
  /** The last line's sum, for the next line appended. */
  last: string;
}

/**
 * Reads the record of `root`, if it has one. Held in memory: one entry per mapped path (names
 * ferry had to change), not per file pulled.
 */
export async function readNamesFile(root: string): Promise<NamesRecord | undefined> {
  const file = join(root, NAMES_FILE);
  // A link planted at its name is neither read through nor written through: refused, by path.
  rejectLinkAt(file);
  const input = createReadStream(file);
  const opened = await new Promise<boolean>((resolve) => {
    input.once('open', () => resolve(true));
    input.once('error', () => resolve(false));
  });
  if (!opened) return undefined;
  const record: NamesRecord = { header: undefined, names: new Map(), last: '' };
  let n = 0;
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    n++;
    if (record.damagedAt) continue;
    if (line === '') continue;
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(line) as Record<string, unknown>;
    } catch {
      record.damagedAt = { line: n, why: 'not a line of JSON' };
      continue;
    }
    if (value.ferry === 'local names') {
      if (value.version !== VERSION || (value.rules !== 'posix' && value.rules !== 'windows')) {
        record.damagedAt = { line: n, why: `a header ferry does not know (version ${String(value.version)}, rules ${String(value.rules)})` };
        continue;
      }
      record.header = { ferry: 'local names', version: VERSION, rules: value.rules, caseInsensitive: value.caseInsensitive === true };
      continue;
    }
    const { local, name, sum } = value;
    if (typeof local !== 'string' || typeof name !== 'string' || sum !== chain(record.last, local, name)) {
      record.damagedAt = { line: n, why: typeof local === 'string' && typeof name === 'string' ? 'its sum does not match (edited by hand, or a line before it removed)' : 'not a line ferry wrote' };
      continue;
    }
    record.names.set(local, name);
    record.last = sum;
  }
  if (!record.header && !record.damagedAt) record.damagedAt = { line: 1, why: 'no header line' };
  return record;
}

/** Appends to the record of a folder being pulled: each mapped path once. */
export class NamesFileWriter {
  private fd: number | undefined;
  private last = '';
  private readonly recorded = new Map<string, string>();

  constructor(
    private readonly root: string,
    private readonly header: Omit<NamesHeader, 'ferry' | 'version'>,
  ) {}

  private damaged = false;
  private sameHeader = false;

  /**
   * Reads what earlier pulls recorded. The file is opened at the first line this run has to add
   * (a run that maps nothing writes nothing). A damaged record is written afresh at once, keeping
   * every line before the damage that checked out; what it lost after that is noted again as the
   * run learns it (every file a pull wrote and still finds, whatever its state: destination.ts).
   */
  async open(read?: NamesRecord | undefined): Promise<void> {
    const existing = read ?? (await readNamesFile(this.root));
    this.damaged = existing?.damagedAt !== undefined;
    this.sameHeader = !this.damaged && existing?.header?.rules === this.header.rules && existing.header.caseInsensitive === this.header.caseInsensitive;
    if (existing && !this.damaged) {
      for (const [local, name] of existing.names) this.recorded.set(local, name);
      this.last = existing.last;
    }
    if (existing && this.damaged) {
      this.fd = this.afresh();
      writeSync(this.fd, `${JSON.stringify({ ferry: 'local names', version: VERSION, ...this.header })}\n`);
      for (const [local, name] of existing.names) this.note(local, name);
    }
  }

  /** Notes that the document at `name` is the file at `local` (nothing when they are the same, or already noted). */
  note(local: string, name: string): void {
    if (local === name || this.recorded.get(local) === name) return;
    const sum = chain(this.last, local, name);
    this.write({ local, name, sum });
    this.last = sum;
    this.recorded.set(local, name);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private write(value: object): void {
    if (this.fd === undefined) {
      this.fd = this.damaged ? this.afresh() : this.appending();
      if (!this.sameHeader) writeSync(this.fd, `${JSON.stringify({ ferry: 'local names', version: VERSION, ...this.header })}\n`);
    }
    writeSync(this.fd, `${JSON.stringify(value)}\n`);
  }

  /** A new record renamed over the damaged one at once: whatever stands at its name is replaced, never written through. */
  private afresh(): number {
    const file = join(this.root, NAMES_FILE);
    const temp = besideName(file);
    const fd = createNew(temp);
    try {
      renameSync(temp, file);
    } catch (err) {
      closeSync(fd);
      rmSync(temp, { force: true });
      throw err;
    }
    this.sameHeader = false;
    return fd;
  }

  /** The record opened to add to it, or made when there is none (its header then written first). */
  private appending(): number {
    const file = join(this.root, NAMES_FILE);
    try {
      return openOwn(file, 'append');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      this.sameHeader = false;
      return createNew(file);
    }
  }
}
