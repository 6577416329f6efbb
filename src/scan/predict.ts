// What the service will likely do with the files a mirror would send, from what it did before in
// the same project (./history.ts). Each figure says its basis; a type the project has no history
// of is "unknown", never guessed. Rules, in order:
//   - an empty file: refused as badFile (the service refuses empty content);
//   - a type the project processed before: refused in the shares it was refused then, by reason;
//   - a type it did not, but another project of the tenant did (./history.ts typeVerdicts): refused
//     as unsupportedFileType when the service refused the type there, else taken (type support is
//     the tenant's; pages unknown);
//   - pages and credits: the pages per byte and credits (ocr + layout) per page of the documents
//     of that type it took, times the bytes of this source's files it would take, and no fewer
//     pages a file than the fewest a document of the type was counted (a small file is a page);
//   - a file larger than any the service took in this project: counted apart, as a risk.
import { extensionOf } from './census.js';
import type { ServiceHistory, TypeHistory, TypeVerdict } from './history.js';

/** The files a mirror would send, by extension, as the scan tallies them. */
export interface SendTally {
  extension: string;
  files: number;
  bytes: number;
  empty: number;
  /** Larger than the largest document the service took in this project. */
  beyondLargest: number;
}

export interface TypeOutlook {
  extension: string;
  files: number;
  bytes: number;
  /** Expected refusals by reason (empty files as badFile included). */
  refused: Record<string, number>;
  /** Expected to be taken; null where the project has no history of the type (empty files aside). */
  taken: number | null;
  pages: number | null;
  credits: number | null;
  basis: string;
}

export interface Outlook {
  documentsRead: number;
  byExtension: TypeOutlook[];
  refusals: { reason: string; files: number }[];
  /** Files (of types with a history) expected to be taken. */
  taken: number;
  /** Files of types the project has no history of: their outcome is unknown. */
  unknown: { files: number; bytes: number; extensions: string[] };
  pages: number;
  credits: number;
  beyondLargestTaken: { files: number; largestTaken: number };
}

/** Tallies the files to send, by extension, against the largest document the service took. */
export class SendTallies {
  private readonly byExt = new Map<string, SendTally>();
  constructor(private readonly largestTaken: number) {}

  add(key: string, size: number): void {
    const ext = extensionOf(key);
    let t = this.byExt.get(ext);
    if (!t) {
      t = { extension: ext, files: 0, bytes: 0, empty: 0, beyondLargest: 0 };
      this.byExt.set(ext, t);
    }
    t.files++;
    t.bytes += size;
    if (size === 0) t.empty++;
    if (this.largestTaken > 0 && size > this.largestTaken) t.beyondLargest++;
  }

  all(): SendTally[] {
    return [...this.byExt.values()];
  }
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/** Extensions the project has no processed document of, among those a mirror would send: what typeVerdicts asks the tenant about. */
export function unknownTypes(tallies: readonly SendTally[], history: ServiceHistory): string[] {
  return tallies.filter((t) => t.files > t.empty && !(history.byExtension.get(t.extension)?.processed ?? 0)).map((t) => t.extension);
}

export function predict(tallies: readonly SendTally[], history: ServiceHistory, verdicts: ReadonlyMap<string, TypeVerdict> = new Map()): Outlook {
  const byExtension = tallies.map((t) => outlookOf(t, history.byExtension.get(t.extension), verdicts.get(t.extension))).sort((a, b) => b.files - a.files || a.extension.localeCompare(b.extension));
  const refusals = new Map<string, number>();
  for (const o of byExtension) for (const [reason, n] of Object.entries(o.refused)) refusals.set(reason, (refusals.get(reason) ?? 0) + n);
  const unknown = byExtension.filter((o) => o.taken === null);
  return {
    documentsRead: history.documents,
    byExtension,
    refusals: [...refusals].map(([reason, files]) => ({ reason, files })).filter((r) => r.files > 0).sort((a, b) => b.files - a.files),
    taken: byExtension.reduce((n, o) => n + (o.taken ?? 0), 0),
    unknown: {
      files: unknown.reduce((n, o) => n + o.files - (o.refused.badFile ?? 0), 0),
      bytes: unknown.reduce((n, o) => n + o.bytes, 0),
      extensions: unknown.map((o) => o.extension),
    },
    pages: round1(byExtension.reduce((n, o) => n + (o.pages ?? 0), 0)),
    credits: round1(byExtension.reduce((n, o) => n + (o.credits ?? 0), 0)),
    beyondLargestTaken: { files: tallies.reduce((n, t) => n + t.beyondLargest, 0), largestTaken: history.largestTaken },
  };
}

function outlookOf(t: SendTally, h: TypeHistory | undefined, elsewhere: TypeVerdict | undefined): TypeOutlook {
  const refused: Record<string, number> = {};
  if (t.empty) refused.badFile = t.empty;
  const nonEmpty = t.files - t.empty;
  const basis: string[] = t.empty ? [`${t.empty} empty (the service refuses an empty file as badFile)`] : [];
  if ((!h || h.processed === 0) && elsewhere && nonEmpty > 0) {
    // Only ever refused as a type there: refused here too. Taken there: supported, pages unknown.
    const where = `in project "${elsewhere.project}" of this tenant`;
    if (elsewhere.taken === 0) {
      refused.unsupportedFileType = nonEmpty;
      basis.push(`no ${t.extension} document processed in this project; ${elsewhere.unsupported} refused as unsupportedFileType ${where}: the type is not supported`);
      return { extension: t.extension, files: t.files, bytes: t.bytes, refused, taken: 0, pages: 0, credits: 0, basis: basis.join('; ') };
    }
    basis.push(`no ${t.extension} document processed in this project; ${elsewhere.taken} taken ${where}: the type is supported, pages and credits unknown`);
    return { extension: t.extension, files: t.files, bytes: t.bytes, refused, taken: nonEmpty, pages: null, credits: null, basis: basis.join('; ') };
  }
  if (!h || h.processed === 0) {
    basis.push(nonEmpty ? `no ${t.extension} document processed in this project yet: unknown` : '');
    return { extension: t.extension, files: t.files, bytes: t.bytes, refused, taken: nonEmpty ? null : 0, pages: null, credits: null, basis: basis.filter(Boolean).join('; ') };
  }
  // Shares of the history, in whole files that add up (largest remainders): never more refusals than files.
  const expected = apportion(nonEmpty, h.processed, h.refused);
  let refusedHere = 0;
  for (const [reason, n] of Object.entries(expected)) {
    refused[reason] = (refused[reason] ?? 0) + n;
    refusedHere += n;
  }
  const taken = Math.max(0, nonEmpty - refusedHere);
  const refusedSaid = Object.entries(h.refused).map(([r, n]) => `${n} ${r}`).join(', ');
  basis.push(`${h.processed} ${t.extension} document${h.processed === 1 ? '' : 's'} processed in this project: ${h.taken} taken${refusedSaid ? `, refused ${refusedSaid}` : ''}`);
  let pages: number | null = null;
  let credits: number | null = null;
  if (h.measuredBytes > 0 && nonEmpty > 0) {
    const takenBytes = t.bytes * (taken / nonEmpty);
    pages = round1(Math.max((takenBytes * h.pages) / h.measuredBytes, taken * (h.minPages ?? 0)));
    credits = h.pages > 0 ? round1((pages * h.credits) / h.pages) : 0;
    basis.push(`${round1((h.pages / h.measuredBytes) * 1024)} pages per KiB and at least ${h.minPages ?? 0} a file, ${h.pages > 0 ? round1(h.credits / h.pages) : 0} credits per page`);
  } else if (taken > 0) basis.push('no page count to go by: pages and credits unknown');
  return { extension: t.extension, files: t.files, bytes: t.bytes, refused, taken, pages, credits, basis: basis.join('; ') };
}

/**
 * `files` split in the shares `counts` have of `of`, as whole files: the total refused is the
 * rounded share of all refusals, handed out by largest remainder (Hamilton's method).
 */
export function apportion(files: number, of: number, counts: Record<string, number>): Record<string, number> {
  const entries = Object.entries(counts).filter(([, n]) => n > 0);
  const exact = entries.map(([reason, n]) => ({ reason, x: (files * n) / of }));
  const total = Math.min(files, Math.round(exact.reduce((sum, e) => sum + e.x, 0)));
  const out: Record<string, number> = {};
  let given = 0;
  for (const e of exact) {
    out[e.reason] = Math.floor(e.x);
    given += out[e.reason]!;
  }
  for (const e of [...exact].sort((a, b) => b.x - Math.floor(b.x) - (a.x - Math.floor(a.x)) || a.reason.localeCompare(b.reason))) {
    if (given >= total) break;
    out[e.reason]!++;
    given++;
  }
  return Object.fromEntries(Object.entries(out).filter(([, n]) => n > 0));
}
