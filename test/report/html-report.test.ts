// The HTML report as a customer sees it: opened in headless Chromium (Debian's package), with
// assertions on the rendered page and a screenshot saved next to it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdtemp, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { upload } from '../../jobs/upload.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { renderReport } from '../../src/report/render.js';
import { startService, writeTree, type Service } from '../helpers/service.js';

const CHROMIUM = process.env.FERRY_CHROMIUM ?? '/usr/bin/chromium';
let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

describe('HTML report', () => {
  // CI installs Chromium (.ci/run) and must run this; a developer machine without it sees a skip.
  it('has Chromium under CI', () => {
    if (process.env.CI) expect(existsSync(CHROMIUM), `Chromium is required under CI but ${CHROMIUM} does not exist`).toBe(true);
  });

  it.skipIf(!existsSync(CHROMIUM))('renders the chart, lists the failed files, sorts them, and fetches nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-html-'));
    const client = service.client();
    const project = (await client.projects.create({ name: 'html report', description: 'r' })).objectIdentifier;
    const playbook = (await client.playbooks.create({ name: 'html report', isPrivate: false, organizationWide: true })).objectIdentifier;
    await writeTree(join(dir, 'src'), {
      'ok.txt': 'fine',
      'zeta/empty.txt': '',
      'alpha/archive.7z': '7z',
      'mid/b__fail_uploadFailure__.txt': 'x',
      'mid/a.tar': 'tar',
    });
    const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
    const result = await upload({ source: join(dir, 'src'), project, playbook, name: 'Customer <onboarding> & co', firstPollMs: 20 }, { client, store });
    store.close();
    const report = result.batches[0]!.report!;
    const html = join(dir, 'report.html');
    await writeFile(html, renderReport(report, 'html'));

    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
      const requested: string[] = [];
      page.on('request', (r) => requested.push(r.url()));
      await page.goto(pathToFileURL(html).href);

      expect(await page.title()).toBe('Upload report: Customer <onboarding> & co');
      expect(await page.locator('#reasons-chart rect').count()).toBe(report.reasons.length);
      expect(await page.locator('#reasons-chart g.reason').first().getAttribute('data-reason')).toBe('unsupportedFileType');
      const box = await page.locator('#reasons-chart rect').first().boundingBox();
      expect(box!.width).toBeGreaterThan(100);
      expect(await page.locator('#total-failed').textContent()).toBe('4');

      const paths = () => page.locator('#failed-files tbody tr td:first-child').allTextContents();
      expect((await paths()).sort()).toEqual(['alpha/archive.7z', 'mid/a.tar', 'mid/b__fail_uploadFailure__.txt', 'zeta/empty.txt']);
      await page.click('#failed-files th button[data-col="0"]');
      expect(await paths()).toEqual(['alpha/archive.7z', 'mid/a.tar', 'mid/b__fail_uploadFailure__.txt', 'zeta/empty.txt']);
      await page.click('#failed-files th button[data-col="0"]');
      expect(await paths()).toEqual(['zeta/empty.txt', 'mid/b__fail_uploadFailure__.txt', 'mid/a.tar', 'alpha/archive.7z']);
      await page.click('#failed-files th button[data-col="1"]');
      const reasons = await page.locator('#failed-files tbody tr td:nth-child(2)').allTextContents();
      expect(reasons).toEqual([...reasons].sort());

      const shot = join(dir, 'report.png');
      await page.screenshot({ path: shot, fullPage: true });
      expect((await stat(shot)).size).toBeGreaterThan(5_000);
      // Self-contained: the page itself is the only thing loaded.
      expect(requested).toEqual([pathToFileURL(html).href]);
    } finally {
      await browser.close();
    }
  });
});
