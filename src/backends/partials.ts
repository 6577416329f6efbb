// The temporary files of a local destination, each in the folder of the file it becomes, and
// renamed into place once whole and dated. Two kinds, both named so that a killed run's leftovers
// are recognised as this job's own (in a fresh container too), and a user's file, or a pulled
// document, that merely looks like one is never touched:
//
//   .ferry-<nonce>-<tag>.partial          a file fetched whole: a killed run's is removed when its
//                                         folder is next made ready
//   .ferry-<k>-<d>-<v>-<tag>.partial      a large file that resumes (issue 63): k names the entry's
//                                         key, d the document (its marker and size: a new version
//                                         at the same path has another d), v the content's version
//                                         as the service named it (its ETag); kept when a write
//                                         fails or the run is killed, for the next attempt to
//                                         continue, and removed after RESUMABLE_KEPT_MS unclaimed
//
// Each part is 8 hex digits of a sha256, the tag one over the job's key and the other parts.
import { createHash, randomBytes } from 'node:crypto';
import { lstat, readdir, rm, stat } from 'node:fs/promises';
import { rejectLinkAt } from './own-files.js';
import { join } from 'node:path';

const PARTIAL = /^\.ferry-([0-9a-f]{8})-([0-9a-f]{8})\.partial$/;
const RESUMABLE = /^\.ferry-([0-9a-f]{8})-([0-9a-f]{8})-([0-9a-f]{8})-([0-9a-f]{8})\.partial$/;

/** Files from this size on keep their bytes for a next attempt: below it, starting over costs less than a look for leftovers. */
export const RESUMABLE_MIN = 16 * 1024 * 1024;

/** A resumable leftover no run has claimed for this long (a document deleted meanwhile, a job given up) is removed. */
export const RESUMABLE_KEPT_MS = 7 * 24 * 3600 * 1000;

function h8(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

function tagOf(jobKey: string, parts: readonly string[]): string {
  return h8([jobKey, ...parts].join('\0'));
}

/** Whether a file name has the shape of a pull's temporary file (whichever job's). */
export function looksPartial(name: string): boolean {
  return PARTIAL.test(name) || RESUMABLE.test(name);
}

/** A temporary name for a file fetched whole. */
export function partialName(jobKey: string): string {
  const nonce = randomBytes(4).toString('hex');
  return `.ferry-${nonce}-${tagOf(jobKey, [nonce])}.partial`;
}

/** What identifies a resumable file's bytes: the entry, the document, and the content's version. */
export interface ResumeIdentity {
  key: string;
  /** The document the bytes are of (its id), or '' when the source has no such marker. */
  marker: string;
  size: number;
}

/** The temporary name of a resumable file, for the content's `version` (its ETag; '' when the service names none). */
export function resumableName(jobKey: string, id: ResumeIdentity, version: string): string {
  const parts = [h8(id.key), h8(`${id.marker}\0${id.size}`), h8(version)];
  return `.ferry-${parts.join('-')}-${tagOf(jobKey, parts)}.partial`;
}

/** A resumable file kept by an earlier attempt at the same document. */
export interface KeptPartial {
  path: string;
  /** Bytes already there. */
  size: number;
  /** Whether the content's version then was `version`. */
  sameVersion(version: string): boolean;
}

/**
 * This job's resumable file in `dir` for the entry, when one is kept for the same document; the
 * entry's leftovers of other documents (an older version at the same path) are removed: their
 * bytes are never stitched onto another's.
 */
export async function keptPartial(dir: string, jobKey: string, id: ResumeIdentity): Promise<KeptPartial | undefined> {
  const k = h8(id.key);
  const d = h8(`${id.marker}\0${id.size}`);
  let found: KeptPartial | undefined;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const m = RESUMABLE.exec(name);
    if (!m || m[1] !== k || tagOf(jobKey, [m[1], m[2] as string, m[3] as string]) !== m[4]) continue;
    const path = join(dir, name);
    const st = m[2] === d && !found ? await lstat(path).catch(() => undefined) : undefined;
    // A link planted at this job's own name for the document is never continued through: said, by path.
    if (st) rejectLinkAt(path);
    if (!st?.isFile()) {
      await rm(path, { force: true });
      continue;
    }
    const v = m[3];
    found = { path, size: st.size, sameVersion: (version) => h8(version) === v };
  }
  return found;
}

/**
 * Clears a folder of this job's leftovers: every file fetched whole, and resumable files no run
 * has claimed for RESUMABLE_KEPT_MS (`now` in ms since the epoch).
 */
export async function removePartials(dir: string, jobKey: string, now = Date.now()): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const whole = PARTIAL.exec(name);
    if (whole) {
      if (tagOf(jobKey, [whole[1] as string]) === whole[2]) await rm(join(dir, name), { force: true });
      continue;
    }
    const resumable = RESUMABLE.exec(name);
    if (!resumable || tagOf(jobKey, resumable.slice(1, 4)) !== resumable[4]) continue;
    const st = await stat(join(dir, name)).catch(() => undefined);
    if (st && now - st.mtimeMs > RESUMABLE_KEPT_MS) await rm(join(dir, name), { force: true });
  }
}
