// What a batch report says, gathered once and rendered in any format: totals, the
// failedReasonSummary breakdown with explanations, file types, and the failed files themselves
// joined to their local paths through the checkpoint store.
import type { FerryClient } from '../api/client.js';
import type { PlaybookDocumentUploadDetails } from '../api/types.js';
import type { CheckpointStore } from '../store/types.js';
import { explain } from './reasons.js';
import { poll, ProcessingTimeoutError } from '../runner/poll.js';
import { readIdentity } from '../backends/project/identity.js';
import { refusalOf } from '../api/refusal.js';

export interface ReasonLine {
  reason: string;
  count: number;
  /** Of the failed documents, 0..1. */
  share: number;
  meaning: string;
  action: string;
}

export interface FailedFile {
  localPath: string | null;
  name: string;
  remoteId: string;
  reason: string;
}

export interface BatchReport {
  /** The playbook of a playbook document upload; null for a project batch (a mirror's, a migration's). */
  playbookIdentifier: string | null;
  /** The project the batch's documents are in, when known. */
  project: string | null;
  uploadIdentifier: string;
  name: string | null;
  dateAdded: string | null;
  dateCompleted: string | null;
  totals: { files: number; bytes: number; completed: number; failed: number; processing: number; durationMs: number | null };
  reasons: ReasonLine[];
  fileTypes: { type: string; count: number }[];
  failedFiles: FailedFile[];
  /** Failed documents the service counts that could not be listed (no project known). */
  failedFilesNote?: string;
  generatedAt: string;
}

export interface ReportSource {
  client: FerryClient;
  playbookIdentifier: string;
  uploadIdentifier: string;
  /** Project the batch's documents went to: needed to list the failed files. */
  project?: string | undefined;
  /** Joins remote ids to local paths when given. */
  store?: CheckpointStore | undefined;
  jobKey?: string | undefined;
}

export async function buildReport(src: ReportSource): Promise<BatchReport> {
  const details = await src.client.documentUploads.details(src.playbookIdentifier, src.uploadIdentifier);
  const report = fromDetails(src.playbookIdentifier, details);
  report.project = src.project ?? null;
  if (!src.project) {
    report.failedFilesNote = 'the project of this batch is unknown (give --project) so failed files cannot be listed';
    return report;
  }
  const failedDocs = [];
  for await (const doc of src.client.documents.list(src.project, { uploadObjectIdentifier: src.uploadIdentifier, indexingStatus: 'failed', flattenList: true, hidePackagedFiles: false })) {
    if (doc.documentUploadObjectIdentifier !== src.uploadIdentifier || doc.isDirectory || !doc.objectIdentifier) continue;
    failedDocs.push(doc);
  }
  report.failedFiles = failedFilesOf(
    failedDocs.map((d) => ({ remoteId: d.objectIdentifier as string, name: d.name ?? '', path: readIdentity(d.metadata)?.path ?? null, reason: d.uploadFailedReason ?? 'unknown' })),
    src,
  );
  return report;
}

export function fromDetails(playbookIdentifier: string, d: PlaybookDocumentUploadDetails): BatchReport {
  const failed = d.failedDocumentCount ?? 0;
  const summary = (d.failedReasonSummary ?? {}) as Record<string, number>;
  const reasons = reasonLines(Object.entries(summary), failed);
  const fileTypes = fileTypeLines(Object.entries((d.fileTypeSummary ?? {}) as Record<string, number>));
  const started = d.dateAdded ? Date.parse(d.dateAdded) : NaN;
  const ended = d.dateCompleted ? Date.parse(d.dateCompleted) : NaN;
  return {
    playbookIdentifier,
    project: null,
    uploadIdentifier: d.objectIdentifier,
    name: d.name ?? null,
    dateAdded: d.dateAdded ?? null,
    dateCompleted: d.dateCompleted ?? null,
    totals: {
      files: d.totalDocumentCount ?? 0,
      bytes: d.totalSizeBytes ?? 0,
      completed: d.completedDocumentCount ?? 0,
      failed,
      processing: d.processingDocumentCount ?? 0,
      durationMs: Number.isNaN(started) || Number.isNaN(ended) ? null : ended - started,
    },
    reasons,
    fileTypes,
    failedFiles: [],
    generatedAt: new Date().toISOString(),
  };
}

export interface ProjectBatchSource {
  client: FerryClient;
  project: string;
  uploadIdentifier: string;
  /** Joins remote ids to local paths when given; else the documents' own identity (ferry.path). */
  store?: CheckpointStore | undefined;
  jobKey?: string | undefined;
}

/**
 * A project batch (the documents a mirror or a migration uploaded under one uploadObjectIdentifier)
 * reported as a playbook batch is: the service keeps no details for it, so the totals, the
 * failedReasonSummary and the file types are counted from the documents themselves, listed once.
 */
export async function buildProjectBatchReport(src: ProjectBatchSource): Promise<BatchReport> {
  return projectBatchReport(await tallyProjectBatch(src.client, src.project, src.uploadIdentifier), src);
}

/** The report of a project batch from a tally already taken (a wait's last one): no second listing. */
export function projectBatchReport(tally: ProjectBatchTally, src: Omit<ProjectBatchSource, 'client'>): BatchReport {
  const failed = tally.failed.length;
  return {
    playbookIdentifier: null,
    project: src.project,
    uploadIdentifier: src.uploadIdentifier,
    name: null,
    dateAdded: tally.firstAdded,
    dateCompleted: tally.processing === 0 && tally.files > 0 ? tally.lastAdded : null,
    totals: { files: tally.files, bytes: tally.bytes, completed: tally.completed, failed, processing: tally.processing, durationMs: null },
    reasons: reasonLines([...tally.reasons], failed),
    fileTypes: fileTypeLines([...tally.fileTypes]),
    failedFiles: failedFilesOf(tally.failed, src),
    generatedAt: new Date().toISOString(),
  };
}

/** The failedReasonSummary as lines, largest first, each explained. */
function reasonLines(counts: [string, number][], failed: number): ReasonLine[] {
  return counts
    .filter(([, count]) => count > 0)
    .map(([reason, count]) => {
      const { transient: _t, ...line } = { reason, count, share: failed > 0 ? count / failed : 0, ...explain(reason) };
      return line;
    })
    .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
}

function fileTypeLines(counts: [string, number][]): BatchReport['fileTypes'] {
  return counts.map(([type, count]) => ({ type, count })).sort((a, b) => b.count - a.count || a.type.localeCompare(b.type));
}

/** The refused documents with their local paths: from the checkpoint store when it has them, else the document's ferry.path. */
function failedFilesOf(docs: ProjectBatchTally['failed'], src: { store?: CheckpointStore | undefined; jobKey?: string | undefined }): FailedFile[] {
  const local = src.store && src.jobKey ? src.store.sourceKeysByRemoteId(src.jobKey, docs.map((d) => d.remoteId)) : new Map<string, string>();
  return docs
    .map((d) => ({ localPath: local.get(d.remoteId) ?? d.path, name: d.name, remoteId: d.remoteId, reason: d.reason }))
    .sort((a, b) => a.reason.localeCompare(b.reason) || (a.localPath ?? a.name).localeCompare(b.localPath ?? b.name));
}

/** What a project batch's documents say of their processing, counted in one listing. */
export interface ProjectBatchTally {
  files: number;
  bytes: number;
  completed: number;
  processing: number;
  reasons: Map<string, number>;
  fileTypes: Map<string, number>;
  /** The refused documents: the path ferry recorded on each (ferry.path), if any. */
  failed: { remoteId: string; name: string; path: string | null; reason: string }[];
  firstAdded: string | null;
  lastAdded: string | null;
}

export async function tallyProjectBatch(client: FerryClient, project: string, uploadIdentifier: string): Promise<ProjectBatchTally> {
  const tally: ProjectBatchTally = { files: 0, bytes: 0, completed: 0, processing: 0, reasons: new Map(), fileTypes: new Map(), failed: [], firstAdded: null, lastAdded: null };
  for await (const doc of client.documents.list(project, { uploadObjectIdentifier: uploadIdentifier, flattenList: true, hidePackagedFiles: false })) {
    if (doc.documentUploadObjectIdentifier !== uploadIdentifier || doc.isDirectory || !doc.objectIdentifier) continue;
    tally.files++;
    tally.bytes += doc.size ?? 0;
    if (doc.dateAdded && (!tally.firstAdded || doc.dateAdded < tally.firstAdded)) tally.firstAdded = doc.dateAdded;
    if (doc.dateAdded && (!tally.lastAdded || doc.dateAdded > tally.lastAdded)) tally.lastAdded = doc.dateAdded;
    const type = doc.fileType ?? 'unknown';
    tally.fileTypes.set(type, (tally.fileTypes.get(type) ?? 0) + 1);
    const refused = refusalOf(doc);
    if (refused) {
      tally.reasons.set(refused, (tally.reasons.get(refused) ?? 0) + 1);
      tally.failed.push({ remoteId: doc.objectIdentifier, name: doc.name ?? '', path: readIdentity(doc.metadata)?.path ?? null, reason: refused });
    } else if (doc.uploadSuccessful === true) tally.completed++;
    else tally.processing++;
  }
  return tally;
}

export interface ProjectBatchWait {
  timeoutMs: number;
  /** Documents the batch holds for sure (what the run uploaded): a late listing is waited for too. */
  expected?: number | undefined;
  onPoll?: ((tally: ProjectBatchTally) => void) | undefined;
  firstPollMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

/** Waits until none of a project batch's documents is still being processed (and all expected are listed). */
export async function waitForProjectBatch(client: FerryClient, project: string, uploadIdentifier: string, opts: ProjectBatchWait): Promise<ProjectBatchTally> {
  let last: ProjectBatchTally | undefined;
  return poll(
    async () => {
      last = await tallyProjectBatch(client, project, uploadIdentifier);
      opts.onPoll?.(last);
      // A run that uploaded nothing into the batch leaves nothing to wait for.
      const listed = last.files >= (opts.expected ?? 1);
      return listed && last.processing === 0 ? last : undefined;
    },
    { firstMs: opts.firstPollMs ?? 1_000, maxMs: 15_000, timeoutMs: opts.timeoutMs, signal: opts.signal },
    () =>
      new ProcessingTimeoutError(
        `batch ${uploadIdentifier} still had ${last ? last.processing + Math.max(0, (opts.expected ?? 0) - last.files) : '?'} document(s) processing after ${Math.round(opts.timeoutMs / 1000)} s`,
      ),
  );
}

/** A tally as the playbook upload details name the same counts (one live line for both kinds of batch). */
export function tallyAsDetails(t: ProjectBatchTally): { totalDocumentCount: number; completedDocumentCount: number; failedDocumentCount: number; processingDocumentCount: number } {
  return { totalDocumentCount: t.files, completedDocumentCount: t.completed, failedDocumentCount: t.failed.length, processingDocumentCount: t.processing };
}
