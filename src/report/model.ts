// What a batch report says, gathered once and rendered in any format: totals, the
// failedReasonSummary breakdown with explanations, file types, and the failed files themselves
// joined to their local paths through the checkpoint store.
import type { FerryClient } from '../api/client.js';
import type { PlaybookDocumentUploadDetails } from '../api/types.js';
import type { CheckpointStore } from '../store/types.js';
import { explain } from './reasons.js';

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
  playbookIdentifier: string;
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
  if (!src.project) {
    report.failedFilesNote = 'the project of this batch is unknown (give --project) so failed files cannot be listed';
    return report;
  }
  const failedDocs = [];
  for await (const doc of src.client.documents.list(src.project, { uploadObjectIdentifier: src.uploadIdentifier, indexingStatus: 'failed', flattenList: true, hidePackagedFiles: false })) {
    if (doc.documentUploadObjectIdentifier !== src.uploadIdentifier || doc.isDirectory || !doc.objectIdentifier) continue;
    failedDocs.push(doc);
  }
  const local = src.store && src.jobKey ? src.store.sourceKeysByRemoteId(src.jobKey, failedDocs.map((d) => d.objectIdentifier as string)) : new Map<string, string>();
  report.failedFiles = failedDocs
    .map((d) => ({ localPath: local.get(d.objectIdentifier as string) ?? null, name: d.name ?? '', remoteId: d.objectIdentifier as string, reason: d.uploadFailedReason ?? 'unknown' }))
    .sort((a, b) => a.reason.localeCompare(b.reason) || (a.localPath ?? a.name).localeCompare(b.localPath ?? b.name));
  return report;
}

export function fromDetails(playbookIdentifier: string, d: PlaybookDocumentUploadDetails): BatchReport {
  const failed = d.failedDocumentCount ?? 0;
  const summary = (d.failedReasonSummary ?? {}) as Record<string, number>;
  const reasons = Object.entries(summary)
    .filter(([, count]) => count > 0)
    .map(([reason, count]) => ({ reason, count, share: failed > 0 ? count / failed : 0, ...explain(reason) }))
    .map(({ transient: _t, ...line }) => line)
    .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
  const fileTypes = Object.entries((d.fileTypeSummary ?? {}) as Record<string, number>)
    .map(([type, count]) => ({ type, count }))
    .sort((a, b) => b.count - a.count || a.type.localeCompare(b.type));
  const started = d.dateAdded ? Date.parse(d.dateAdded) : NaN;
  const ended = d.dateCompleted ? Date.parse(d.dateCompleted) : NaN;
  return {
    playbookIdentifier,
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
