// `ferry scan`: before an onboarding, what a source holds, which of its files are the same, what the
// service will likely refuse and what it will cost, and the least time a mirror can take. It reads
// and never writes: no lease, no checkpoint store (a plan against the project is made in a scratch
// one, from what the project holds), and it works with a read-only client.
//
// One walk of the source serves the census and, with --project, the mirror's own dry run (the
// same new/changed/unchanged). Files are read only where another shares their size (the duplicate
// search); an archive is walked a second time for that, and only then.
import type { FerryClient } from '../src/api/client.js';
import { describeTarget, type Target } from '../src/api/target.js';
import { openScratchStore } from '../src/store/index.js';
import { Census } from '../src/scan/census.js';
import { findDuplicates } from '../src/scan/duplicates.js';
import { readHistory, typeVerdicts } from '../src/scan/history.js';
import { predict, SendTallies, unknownTypes, type Outlook } from '../src/scan/predict.js';
import type { ScanReport, ScanTime } from '../src/scan/report.js';
import { Bandwidth } from '../src/sync/bandwidth.js';
import { REMOVED_WHILE_READ } from '../src/backends/folder/source.js';
import { normaliseRemotePath, open, planMirror, sourceNotes, type MirrorOptions } from './mirror.js';
import { overlayOf, unmatchedWarning } from '../src/manifest/index.js';

export type { ScanReport } from '../src/scan/report.js';

export type ScanOptions = Pick<MirrorOptions, 'source' | 'include' | 'exclude' | 'rules' | 'followSymlinks' | 'archiveEncoding' | 'maxEntries' | 'stripComponents' | 'manifest' | 'manifestDelimiter' | 'manifestEncoding' | 'manifestSheet' | 'bwlimit' | 'minSize' | 'maxSize' | 'minAge' | 'maxAge'> & {
  /** The project a mirror would write to: the service's history there, and the plan against it. */
  project?: string | undefined;
  to?: string | undefined;
  signal?: AbortSignal | undefined;
};

export async function scan(opts: ScanOptions, client: FerryClient | undefined): Promise<ScanReport> {
  const census = await Census.open();
  try {
    const mirrorOpts: MirrorOptions = { ...opts, project: opts.project ?? '', to: opts.to };
    let plan: ScanReport['plan'];
    let outlook: Outlook | undefined;
    const notes: string[] = [];
    if (opts.project !== undefined && client) {
      // The history first: a file larger than any the service took is told as it passes.
      const history = await readHistory(client, opts.project, opts.signal);
      const sending = new SendTallies(history.largestTaken);
      const scratch = openScratchStore();
      try {
        const p = await planMirror(mirrorOpts, { client, store: scratch.store }, (item) => {
          if (item.action !== 'deleted locally') sending.add(item.key, item.size ?? 0);
        }, (entry) => census.add(entry));
        plan = { new: p.new, changed: p.changed, unchanged: p.unchanged, bytes: p.bytes, foldersToCreate: p.foldersToCreate };
        notes.push(...p.notes);
      } finally {
        scratch.dispose();
      }
      // Types this project never processed: what the tenant's other projects say of them.
      const verdicts = await typeVerdicts(client, opts.project, unknownTypes(sending.all(), history), opts.signal);
      outlook = predict(sending.all(), history, verdicts);
    } else {
      const source = await open(mirrorOpts);
      try {
        await source.prepare();
        for await (const entry of source.entries(opts.signal)) census.add(entry);
        notes.push(...sourceNotes(source).map((n) => n.reason));
        // A manifest's rows that name no file of the source: said as the dry run says them.
        const manifest = overlayOf(source)?.outcome(source);
        if (manifest?.unmatched.count) notes.push(unmatchedWarning(manifest.unmatched));
      } finally {
        await source.close();
      }
    }
    const duplicates = await findDuplicates(census, () => open(mirrorOpts), opts.signal);
    const figures = census.figures();
    const vanishedInWalk = figures.skipped.find((s) => s.reason === REMOVED_WHILE_READ)?.count ?? 0;
    const sendFiles = plan ? plan.new + plan.changed : figures.files;
    const sendBytes = plan ? plan.bytes : figures.bytes;
    const foldersToCreate = plan ? plan.foldersToCreate : figures.folders;
    return {
      source: opts.source,
      ...(opts.project !== undefined && client ? { target: { tenant: describeTarget(client.target as Target), project: opts.project, folder: normaliseRemotePath(opts.to) } } : {}),
      census: figures,
      duplicates,
      vanished: vanishedInWalk + duplicates.vanished.length,
      ...(plan ? { plan } : {}),
      ...(outlook ? { outlook } : {}),
      // A timetable counts at the rate in force now (its `off`: no limit).
      time: timeOf(sendFiles, foldersToCreate, sendBytes, client?.transport.requestsPerSecond, opts.bwlimit === undefined ? undefined : (new Bandwidth(opts.bwlimit).rate ?? undefined)),
      notes,
    };
  } finally {
    await census.close();
  }
}

function timeOf(files: number, folders: number, bytes: number, rps: number | undefined, bwlimit: number | undefined): ScanTime {
  const requests = files + folders + (files > 0 ? 1 : 0);
  const byRequests = rps ? requests / rps : 0;
  const byBytes = bwlimit ? bytes / bwlimit : 0;
  return {
    requests,
    bytes,
    requestsPerSecond: rps ?? null,
    bwlimit: bwlimit ?? null,
    leastSeconds: rps || bwlimit ? Math.round(Math.max(byRequests, byBytes) * 10) / 10 : null,
  };
}
