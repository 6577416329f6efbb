// Makes docs/scan-page.png, the README's picture of `ferry scan --html`: the demo's sample tree,
// scanned for a project that took the same sample once before (its history), opened in Debian's
// Chromium. Run after `npm run build`: node bench/workers/scan-page.mjs [out.png]
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { startEmulator } from '../../dist/src/emulator/index.js';
import { FerryClient } from '../../dist/src/api/client.js';
import { SqliteCheckpointStore } from '../../dist/src/store/index.js';
import { SAMPLE_TREE } from '../../dist/src/cli/actions/demo.js';
import { mirror } from '../../dist/jobs/mirror.js';
import { scan } from '../../dist/jobs/scan.js';
import { renderScanHtml } from '../../dist/src/scan/render.js';

const out = process.argv[2] ?? 'docs/scan-page.png';
const dir = await mkdtemp(join(tmpdir(), 'ferry-scan-page-'));
const emulator = await startEmulator({ processing: { minDelayMs: 10, maxDelayMs: 50, seed: 42 } });
const t = emulator.tenants[0];
const client = new FerryClient({
  address: { baseUrl: emulator.baseUrl, settingsUrl: emulator.settingsUrl, authUrl: emulator.authUrl },
  credentials: { clientId: t.clientId, clientSecret: t.clientSecret, audience: emulator.audience },
});
const sample = join(dir, 'sample');
for (const [rel, content] of Object.entries(SAMPLE_TREE)) {
  const { mkdir } = await import('node:fs/promises');
  const path = join(sample, rel);
  await mkdir(rel.endsWith('/') ? path : join(path, '..'), { recursive: true });
  if (!rel.endsWith('/')) await writeFile(path, content);
}
// A copy or two, as a real share has them.
await writeFile(join(sample, 'contracts', 'notes (copy).md'), SAMPLE_TREE['contracts/notes.md']);
await writeFile(join(sample, 'finance', 'q1 report - final.xlsx'), SAMPLE_TREE['finance/q1 report.xlsx']);
const project = (await client.projects.create({ name: 'Demo', description: 'scan page' })).objectIdentifier;
const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
await mirror({ source: sample, project, to: 'Earlier', waitMs: 60_000 }, { client, store });
store.close();
const report = await scan({ source: sample, project, to: 'Onboarding', bwlimit: 1024 * 1024 }, client);
const page = join(dir, 'scan.html');
await writeFile(page, renderScanHtml({ ...report, source: './sample' }));
const browser = await chromium.launch({ executablePath: process.env.FERRY_CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
const tab = await browser.newPage({ viewport: { width: 1100, height: 900 } });
await tab.goto(pathToFileURL(page).href);
await tab.screenshot({ path: out, fullPage: true });
await browser.close();
await client.close();
await emulator.close();
console.log(`wrote ${out}`);
