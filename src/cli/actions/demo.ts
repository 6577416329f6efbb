// `ferry demo` (`npm run demo`): the main job end to end on the embedded emulator. A small sample
// tree, some of whose files the service will refuse, is mirrored, processing is waited out, and
// the outcome is printed with every failure explained.
import { poll } from '../../runner/poll.js';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { FerryClient } from '../../api/client.js';
import type { Document } from '../../api/types.js';
import { startEmulator } from '../../emulator/index.js';
import { SqliteCheckpointStore } from '../../store/index.js';
import { mirror } from '../../../jobs/mirror.js';
import { explain } from '../../report/reasons.js';
import { summaryText } from '../output.js';
import { visible } from '../../text.js';
import { EXIT } from '../exit-codes.js';

// Assembled at run time so that no file in the repository carries the antivirus test signature.
const EICAR = ['X5O!P%@AP[4\\PZX54(P^)7CC)7}$', 'EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*'].join('');
const pdf = (pages: number) => `%PDF-1.4\n${Array.from({ length: pages }, (_, i) => `${i + 3} 0 obj << /Type /Page >> endobj\n`).join('')}%%EOF\n`;

export const SAMPLE_TREE: Record<string, string> = {
  'contracts/2024/master services agreement.pdf': pdf(12),
  'contracts/2024/nda – acme.docx': 'PK docx bytes (sample)',
  'contracts/notes.md': '# Notes\nRenewal due in March.\n',
  'finance/q1 report.xlsx': 'PK xlsx bytes (sample)',
  'finance/scanned invoice.pdf': 'JPEG bytes renamed to .pdf',
  'inbox/attachment.txt': `${EICAR}\n`,
  'inbox/backup.7z': '7z archive bytes',
  'inbox/empty.txt': '',
  'images/logo.png': 'PNG bytes (sample)',
  'empty folder/': '',
};

export async function demoAction(): Promise<void> {
  process.exitCode = await runDemo();
}


export async function runDemo(out: NodeJS.WritableStream = process.stdout): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-demo-'));
  const emulator = await startEmulator({ processing: { minDelayMs: 100, maxDelayMs: 600, seed: 42 } });
  const tenant = emulator.tenants[0]!;
  const client = new FerryClient({
    address: { baseUrl: emulator.baseUrl, settingsUrl: emulator.settingsUrl, authUrl: emulator.authUrl },
    credentials: { clientId: tenant.clientId, clientSecret: tenant.clientSecret, audience: emulator.audience },
  });
  const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
  try {
    const source = join(dir, 'sample');
    for (const [rel, content] of Object.entries(SAMPLE_TREE)) {
      const path = join(source, rel);
      if (rel.endsWith('/')) await mkdir(path, { recursive: true });
      else {
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, content);
      }
    }
    const project = tenant.assistants[0]!.projectIdentifier;
    const files = Object.keys(SAMPLE_TREE).filter((k) => !k.endsWith('/'));
    const folders = new Set(Object.keys(SAMPLE_TREE).flatMap((k) => k.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
    out.write(`ferry demo: an emulator of the service, started for this demo in memory (each run of the demo starts over)\n`);
    out.write(`  ${emulator.baseUrl}, tenant ${tenant.name}, project ${project}\n`);
    out.write(`  the sample: ${files.length} files in ${folders.size} folders (one of them empty), in ${source}\n\n`);

    out.write(`1. ferry mirror ${source} --project ${project} --to Demo\n`);
    const summary = await mirror({ source, project, to: 'Demo', metadata: { source: 'ferry demo' } }, { client, store });
    out.write(summaryText(summary));
    out.write(`   "succeeded": the service took all ${summary.counts.uploaded} files, in ${(summary.folders as { created: number }).created} new folders (Demo and the sample's ${folders.size}). Processing them is its own step, which may still refuse some.\n\n`);

    out.write('2. waiting for the service to process the uploads (ferry watch does this for any batch)...\n');
    const docs = await waitForProcessing(client, project, String(summary.uploadIdentifier));
    const failed = docs.filter((d) => d.uploadFailedReason);
    out.write(`   processed: ${docs.length - failed.length} of ${docs.length} indexed, ${failed.length} refused by processing (ferry report shows this for any batch)\n`);
    const byReason = new Map<string, Document[]>();
    for (const d of failed) byReason.set(String(d.uploadFailedReason), [...(byReason.get(String(d.uploadFailedReason)) ?? []), d]);
    for (const [reason, list] of [...byReason].sort((a, b) => b[1].length - a[1].length)) {
      const help = explain(reason);
      out.write(`\n   ${reason} (${list.length}): ${help.meaning}\n     what to do: ${help.action}\n`);
      for (const d of list) out.write(`     - ${visible(d.path ?? d.name ?? '')}\n`);
    }

    out.write(`\n3. the same mirror again, with the same checkpoint store\n`);
    const again = await mirror({ source, project, to: 'Demo', metadata: { source: 'ferry demo' } }, { client, store });
    out.write(summaryText(again));
    out.write(`   nothing was uploaded twice: run ${String(again.runId)} uploaded ${again.counts.uploaded}. A run with no checkpoint store at all finds the files on the service instead.\n`);
    return EXIT.ok;
  } finally {
    store.close();
    await client.close();
    await emulator.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Polls the batch's documents until none is still in progress (bounded: about a minute). */
async function waitForProcessing(client: FerryClient, project: string, batch: string): Promise<Document[]> {
  return poll(
    async () => {
      const docs: Document[] = [];
      for await (const d of client.documents.list(project, { uploadObjectIdentifier: batch, flattenList: true, includePath: true })) {
        if (!d.isDirectory) docs.push(d);
      }
      return docs.every((d) => !d.uploadInProgress) ? docs : undefined;
    },
    { firstMs: 100, maxMs: 1_600, timeoutMs: 60_000 },
    () => new Error('the emulator did not finish processing the demo uploads within a minute'),
  );
}
