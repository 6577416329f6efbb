// Background document processing: after a seeded-random delay each uploaded file is
// scanned and ends either uploadSuccessful or with an uploadFailedReason.
// Pending documents are in SQLite, so processing resumes after a restart.
import type { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { BlobStore, EmulatorEvents, Gate } from '../context.js';
import { scanContent, type ContentScan } from './content-scan.js';
import type { FaultInjector } from './faults.js';
import { extensionOf, SUPPORTED_EXTENSIONS } from './file-kinds.js';
import { seededRandom } from './random.js';
import {
  type DocumentRecord,
  type DocumentStore,
  type ProcessingOutcome,
  UPLOAD_FAILED_REASONS,
  type UploadFailedReason,
} from '../state/documents.js';
import type { TenantStore } from '../state/tenants.js';

export interface ProcessingSettings {
  minDelayMs?: number;
  maxDelayMs?: number;
  seed?: number;
  /** Most pages a PDF may have when ocrStrategy is `always` (default 50). */
  ocrPageLimit?: number;
}

interface Dependencies {
  documents: DocumentStore;
  tenants: TenantStore;
  blobs: BlobStore;
  events: EventEmitter;
  faults: FaultInjector;
  logger: Logger;
  gate: Gate;
}

/** How long a document waits before it is processed, drawn in [min, max] from the seeded sequence. */
export interface ProcessingDelays {
  minDelayMs: number;
  maxDelayMs: number;
}

/** Credits charged per page, by what was done to the page. */
const CREDITS = { indexing: 0.1, ocrAlways: 1, ocrDetect: 0.5, layout: 0.25, spreadsheetLayout: 0.1 };
const CHARS_PER_TEXT_PAGE = 3000;
const BYTES_PER_TOKEN = 4;
const NAME_TRIGGER = new RegExp(`__fail_(${UPLOAD_FAILED_REASONS.join('|')})__`);
const REASONS_PREVENTING_INDEXING: ReadonlySet<UploadFailedReason> = new Set(['unsupportedFileType', 'maliciousFile', 'badFile']);

export class DocumentProcessor {
  /** The documents waiting for their delay, by id. */
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** The documents being processed now, by id. */
  private readonly running = new Map<string, Promise<void>>();
  /** Runs begun in a state since replaced: they complete nothing (the gate), but close() waits for them. */
  private readonly stale = new Set<Promise<void>>();
  private readonly random;
  private delays: ProcessingDelays;
  private readonly ocrPageLimit: number;
  private closed = false;

  constructor(
    private readonly deps: Dependencies,
    settings: ProcessingSettings = {},
  ) {
    this.delays = checkDelays({ minDelayMs: settings.minDelayMs ?? 50, maxDelayMs: Math.max(settings.minDelayMs ?? 50, settings.maxDelayMs ?? 300) });
    this.ocrPageLimit = settings.ocrPageLimit ?? 50;
    this.random = seededRandom(settings.seed ?? 1);
  }

  get settings(): ProcessingDelays {
    return { ...this.delays };
  }

  /** New delays, for documents scheduled from now on (those waiting keep theirs; `drain` ends them all). */
  setDelays(delays: ProcessingDelays): void {
    this.delays = checkDelays(delays);
  }

  /** Schedules every document left pending (by a previous run on the same dataDir, or in a state just restored). */
  resumePending(): void {
    for (const document of this.deps.documents.pending()) this.schedule(document);
  }

  schedule(document: DocumentRecord): void {
    if (this.closed || this.timers.has(document.objectIdentifier) || this.running.has(document.objectIdentifier)) return;
    const { minDelayMs, maxDelayMs } = this.delays;
    const delay = minDelayMs + Math.floor(this.random() * (maxDelayMs - minDelayMs + 1));
    const timer = setTimeout(() => {
      this.timers.delete(document.objectIdentifier);
      this.start(document);
    }, delay);
    this.timers.set(document.objectIdentifier, timer);
  }

  /** Processes every pending document now, without its delay; resolves once all are done, with how many there were. */
  async drain(): Promise<number> {
    this.stopTimers();
    const pending = this.deps.documents.pending();
    for (const document of pending) this.start(document);
    await Promise.allSettled([...this.running.values()]);
    return pending.length;
  }

  /** The state was replaced: forget what was scheduled in the old one and schedule what the new one holds. */
  restart(): void {
    this.stopTimers();
    // A document of the new state may share its id with one still being scanned in the old: it is scheduled anew.
    for (const run of this.running.values()) {
      this.stale.add(run);
      void run.finally(() => this.stale.delete(run));
    }
    this.running.clear();
    this.resumePending();
  }

  /** Stops scheduling and waits for documents being processed; pending ones stay pending. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopTimers();
    await Promise.allSettled([...this.running.values(), ...this.stale]);
  }

  private stopTimers(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private start(document: DocumentRecord): void {
    if (this.running.has(document.objectIdentifier)) return;
    const run: Promise<void> = this.process(document).finally(() => {
      if (this.running.get(document.objectIdentifier) === run) this.running.delete(document.objectIdentifier);
    });
    this.running.set(document.objectIdentifier, run);
  }

  private async process(document: DocumentRecord): Promise<void> {
    const { documents, events, logger, gate } = this.deps;
    const began = gate.now;
    try {
      if (!documents.glance(document.projectIdentifier, document.objectIdentifier)) return; // deleted meanwhile
      const outcome = await this.decide(document);
      // Scanned in a state since reset or restored: that state's documents are not this one's to complete.
      if (!gate.stillCurrent(began)) return;
      if (outcome.uploadSuccessful) {
        this.deps.tenants.debit(document.tenant, chargedCredits(outcome));
      }
      documents.complete(document.objectIdentifier, outcome);
    } catch (error) {
      if (!gate.stillCurrent(began)) return;
      logger.error({ err: error, documentIdentifier: document.objectIdentifier }, 'document processing crashed');
      documents.complete(document.objectIdentifier, failure(document, 'unknownException'));
    }
    const processed: EmulatorEvents['documentProcessed'] = {
      tenant: document.tenant,
      projectIdentifier: document.projectIdentifier,
      documentIdentifier: document.objectIdentifier,
      uploadIdentifier: document.uploadIdentifier,
    };
    events.emit('documentProcessed', processed);
  }

  private async decide(document: DocumentRecord): Promise<ProcessingOutcome> {
    const triggered = NAME_TRIGGER.exec(document.name)?.[1] as UploadFailedReason | undefined;
    if (triggered) return failure(document, triggered);
    const extension = extensionOf(document.name);
    if (!extension || !SUPPORTED_EXTENSIONS[extension]) return failure(document, 'unsupportedFileType');
    const content = document.blobKey ? this.deps.blobs.get(document.blobKey) : undefined;
    if (!content) return failure(document, 'uploadFailure');
    const scan = await scanContent(content as AsyncIterable<Buffer>);
    if (scan.containsEicar) return failure(document, 'maliciousFile');
    if (scan.bytes === 0 || (extension === 'pdf' && !scan.startsWithPdfHeader)) return failure(document, 'badFile');
    if (this.deps.tenants.credits(document.tenant) <= 0) return failure(document, 'insufficientCredits');
    const outcome = success(document, extension, scan);
    if (extension === 'pdf' && document.ocrStrategy === 'always' && (outcome.pageCount ?? 0) > this.ocrPageLimit) {
      return failure(document, 'ocrPageLimitExceeded');
    }
    const injected = this.deps.faults.processingFailure();
    return injected ? failure(document, injected) : outcome;
  }
}

const MAX_DELAY_MS = 2 ** 31 - 1;

function checkDelays(delays: ProcessingDelays): ProcessingDelays {
  const { minDelayMs, maxDelayMs } = delays;
  for (const [name, value] of Object.entries(delays)) {
    // setTimeout's own limit: a longer delay would fire at once.
    if (!Number.isInteger(value) || value < 0 || value > MAX_DELAY_MS) throw new RangeError(`${name} must be a whole number of milliseconds from 0 to ${MAX_DELAY_MS}, not ${JSON.stringify(value)}`);
  }
  if (minDelayMs > maxDelayMs) throw new RangeError(`minDelayMs (${minDelayMs}) is more than maxDelayMs (${maxDelayMs})`);
  return { minDelayMs, maxDelayMs };
}

function success(document: DocumentRecord, extension: string, scan: ContentScan): ProcessingOutcome {
  const kind = SUPPORTED_EXTENSIONS[extension]!;
  const pageCount =
    extension === 'pdf'
      ? Math.max(1, scan.pdfPageObjects)
      : kind.fileType === 'text'
        ? Math.max(1, Math.ceil(scan.bytes / CHARS_PER_TEXT_PAGE))
        : kind.fileType === 'image'
          ? 1
          : null;
  const pages = pageCount ?? 0;
  const ocrApplies = extension === 'pdf' || kind.fileType === 'image';
  const ocrPerPage =
    document.ocrStrategy === 'always' ? CREDITS.ocrAlways : document.ocrStrategy === 'detect' && ocrApplies ? CREDITS.ocrDetect : 0;
  const layoutPerPage =
    document.coordinateExtractionStrategy === 'never'
      ? 0
      : document.coordinateExtractionStrategy === 'spreadsheet'
        ? CREDITS.spreadsheetLayout
        : CREDITS.layout;
  return {
    uploadSuccessful: true,
    uploadFailedReason: null,
    indexingNotPossible: false,
    unsupportedFileType: false,
    fileType: kind.fileType,
    extension,
    contentType: kind.contentType,
    pageCount,
    tokenCount: kind.fileType === 'text' ? Math.ceil(scan.bytes / BYTES_PER_TOKEN) : 0,
    ocrCreditsCost: round(pages * ocrPerPage),
    layoutCreditsCost: round(pages * layoutPerPage),
  };
}

function failure(document: DocumentRecord, reason: UploadFailedReason): ProcessingOutcome {
  const extension = extensionOf(document.name);
  const kind = extension ? SUPPORTED_EXTENSIONS[extension] : undefined;
  return {
    uploadSuccessful: false,
    uploadFailedReason: reason,
    indexingNotPossible: REASONS_PREVENTING_INDEXING.has(reason),
    unsupportedFileType: reason === 'unsupportedFileType',
    fileType: kind?.fileType ?? 'unknown',
    extension,
    contentType: kind?.contentType ?? document.contentType,
    pageCount: null,
    tokenCount: null,
    ocrCreditsCost: null,
    layoutCreditsCost: null,
  };
}

function chargedCredits(outcome: ProcessingOutcome): number {
  return round((outcome.pageCount ?? 0) * CREDITS.indexing + (outcome.ocrCreditsCost ?? 0) + (outcome.layoutCreditsCost ?? 0));
}

function round(credits: number): number {
  return Math.round(credits * 1000) / 1000;
}
