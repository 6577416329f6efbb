// A scan as a person reads it: a few lines for a terminal, or one self-contained page (the figures
// of the JSON, charts where a person would rather look, tables sorted by a click). Every name from
// the source or the service is escaped: on a terminal its controls made visible, on the page also
// its markup.
import type { ScanReport } from './report.js';
import { formatBytes, formatDuration, visible } from '../text.js';
import { barChart, esc, PAGE_STYLE, SORT_SCRIPT } from '../report/html.js';

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function leastTime(r: ScanReport): string {
  const t = r.time;
  if (t.leastSeconds === null) return 'no --rps or --bwlimit set: the service\'s own pace decides';
  const least = t.leastSeconds < 1 ? 'under a second' : `at least ${formatDuration(t.leastSeconds * 1000)}`;
  const limits = [t.requestsPerSecond ? `${t.requestsPerSecond} requests a second` : '', t.bwlimit ? `${formatBytes(t.bwlimit)}/s` : ''].filter(Boolean).join(' and ');
  return `${least} at ${limits}`;
}

export function renderScanText(r: ScanReport): string {
  const c = r.census;
  const d = r.duplicates;
  const lines = [
    `scan of ${visible(r.source)}${r.target ? ` for project ${r.target.project}${r.target.folder ? `/${visible(r.target.folder)}` : ''} (${visible(r.target.tenant)})` : ''}`,
    `  ${plural(c.files, 'file')}, ${plural(c.folders, 'folder')}, ${formatBytes(c.bytes)}${c.emptyFiles ? `; ${c.emptyFiles} empty` : ''}${c.skippedCount ? `; ${c.skippedCount} skipped` : ''}${c.refusedCount ? `; ${c.refusedCount} refused names` : ''}${r.vanished ? `; ${r.vanished} vanished during the scan` : ''}`,
  ];
  if (c.byExtension.length) {
    lines.push('  by type:');
    for (const e of c.byExtension.slice(0, 12)) lines.push(`    ${visible(e.extension).padEnd(10)} ${plural(e.files, 'file').padStart(12)} ${formatBytes(e.bytes).padStart(10)}   largest ${formatBytes(e.largest.size)} ${visible(e.largest.path)}`);
    if (c.byExtension.length > 12) lines.push(`    … ${c.byExtension.length - 12} more types (--json or --html lists them all)`);
  }
  if (c.deepest[0]) lines.push(`  deepest: ${plural(c.deepest[0].value, 'folder')} down, ${visible(c.deepest[0].path)}`);
  if (c.longest[0]) lines.push(`  longest path: ${c.longest[0].value} bytes, ${visible(c.longest[0].path)}`);
  for (const s of c.skipped) lines.push(`  skipped ${s.count}: ${visible(s.reason)} (e.g. ${s.examples.map(visible).join(', ')})`);
  for (const f of c.refused.slice(0, 10)) lines.push(`  refused name: ${visible(f.path)}: ${visible(f.reason)}`);
  if (c.refusedCount > 10) lines.push(`  … ${c.refusedCount - 10} more refused names`);
  lines.push(d.groups ? `  duplicates: ${plural(d.groups, 'group')} of identical files, ${plural(d.extraCopies, 'extra copy', 'extra copies')}, ${formatBytes(d.wastedBytes)} that a mirror uploads again (one document per path)` : '  duplicates: none');
  for (const g of d.largestGroups.slice(0, 5)) lines.push(`    ${g.copies} × ${formatBytes(g.size)}: ${g.paths.slice(0, 4).map(visible).join(', ')}${g.paths.length > 4 ? ', …' : ''}`);
  if (d.hashedFiles) lines.push(`    (read ${plural(d.hashedFiles, 'file')}, ${formatBytes(d.hashedBytes)}: only those sharing a size with another)`);
  if (r.plan) lines.push(`  against the project: ${r.plan.new} new, ${r.plan.changed} changed, ${r.plan.unchanged} unchanged; ${formatBytes(r.plan.bytes)} to send${r.plan.foldersToCreate ? `, ${plural(r.plan.foldersToCreate, 'folder')} to create` : ''}`);
  const o = r.outlook;
  if (o) {
    lines.push(`  the service (from ${plural(o.documentsRead, 'document')} already in the project):`);
    lines.push(`    likely taken ${o.taken}${o.refusals.length ? `; likely refused: ${o.refusals.map((x) => `${x.files} ${x.reason}`).join(', ')}` : ''}${o.unknown.files ? `; unknown ${o.unknown.files} (no history of ${o.unknown.extensions.map(visible).join(', ')})` : ''}`);
    lines.push(`    about ${o.pages} pages and ${o.credits} credits${o.unknown.files ? ', beside the unknown types' : ''}`);
    if (o.beyondLargestTaken.files) lines.push(`    ${plural(o.beyondLargestTaken.files, 'file')} larger than any the service took here (${formatBytes(o.beyondLargestTaken.largestTaken)})`);
  }
  lines.push(`  time: ${plural(r.time.requests, 'request')}, ${formatBytes(r.time.bytes)}; ${leastTime(r)}`);
  for (const n of r.notes) lines.push(`  note: ${visible(n)}`);
  return `${lines.join('\n')}\n`;
}

type Cell = { text: string | number; v?: number } | { lines: readonly string[] };

function cellHtml(cell: Cell): string {
  if ('lines' in cell) return `<td>${cell.lines.map(esc).join('<br>')}</td>`;
  return cell.v !== undefined ? `<td class="n" data-v="${cell.v}">${esc(cell.text)}</td>` : `<td>${esc(cell.text)}</td>`;
}

function table(id: string, heads: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const head = heads.map((h, i) => `<th><button data-col="${i}">${esc(h)}</button></th>`).join('');
  const body = rows.map((row) => `<tr>${row.map(cellHtml).join('')}</tr>`).join('');
  return `<table id="${id}" class="sortable"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

const num = (n: number) => ({ text: n, v: n });
const size = (n: number) => ({ text: formatBytes(n), v: n });
const text = (s: string) => ({ text: s });

export function renderScanHtml(r: ScanReport): string {
  const c = r.census;
  const d = r.duplicates;
  const o = r.outlook;
  const title = `Scan of ${r.source}`;
  const figure = (id: string, value: string | number, label: string) => `<div><b id="${id}">${esc(value)}</b>${esc(label)}</div>`;
  const outcomes = o
    ? [{ label: 'likely taken', value: o.taken }, ...o.refusals.map((x) => ({ label: x.reason, value: x.files })), ...(o.unknown.files ? [{ label: 'unknown', value: o.unknown.files }] : [])]
    : [];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
${PAGE_STYLE}
</style></head><body>
<h1>${esc(title)}</h1>
<p>${r.target ? `For project <code>${esc(r.target.project)}</code>${r.target.folder ? `, folder <code>${esc(r.target.folder)}</code>` : ''} of ${esc(r.target.tenant)}.` : 'No project given: what the service will do is not predicted.'} Nothing was written to the service.</p>
<div class="totals">
${figure('files', c.files, 'files')}${figure('folders', c.folders, 'folders')}${figure('bytes', formatBytes(c.bytes), 'in all')}${figure('empty', c.emptyFiles, 'empty files')}
${figure('duplicate-groups', d.groups, 'duplicate groups')}${figure('wasted', formatBytes(d.wastedBytes), 'in extra copies')}${figure('skipped', c.skippedCount, 'skipped')}${figure('refused-names', c.refusedCount, 'names refused')}
${r.plan ? `${figure('new', r.plan.new, 'new')}${figure('changed', r.plan.changed, 'changed')}${figure('unchanged', r.plan.unchanged, 'unchanged')}` : ''}
${o ? `${figure('likely-taken', o.taken, 'likely taken')}${figure('likely-refused', o.refusals.reduce((n, x) => n + x.files, 0), 'likely refused')}${figure('credits', o.credits, 'credits (estimate)')}` : ''}
${figure('requests', r.time.requests, 'requests')}
</div>
<p id="least-time">${esc(leastTime(r))}</p>
<h2>Bytes by type</h2>
${barChart('bytes-chart', 'bytes by file type', c.byExtension.slice(0, 12).map((e) => ({ label: e.extension, value: e.bytes, said: `${formatBytes(e.bytes)} in ${e.files}` })))}
${table('by-type', ['Type', 'Files', 'Bytes', 'Empty', 'Largest', 'Largest file'], c.byExtension.map((e) => [text(e.extension), num(e.files), size(e.bytes), num(e.empty), size(e.largest.size), text(e.largest.path)]))}
${o ? `<h2>What the service will likely do</h2>
<p>From ${esc(o.documentsRead)} documents already in the project; each figure gives its basis.</p>
${barChart('outcomes-chart', 'predicted outcomes', outcomes)}
${table('outlook', ['Type', 'Files', 'Bytes', 'Likely refused', 'Pages', 'Credits', 'Basis'], o.byExtension.map((x) => [text(x.extension), num(x.files), size(x.bytes), text(Object.entries(x.refused).map(([k, n]) => `${n} ${k}`).join(', ')), x.pages === null ? text('unknown') : num(x.pages), x.credits === null ? text('unknown') : num(x.credits), text(x.basis)]))}` : ''}
<h2>Duplicates</h2>
${d.groups ? `<p>${esc(`${d.groups} groups of identical files: ${d.extraCopies} extra copies, ${formatBytes(d.wastedBytes)} that a mirror uploads again (one document per path).`)}</p>
${barChart('duplicates-chart', 'largest duplicate groups', d.largestGroups.slice(0, 10).map((g) => ({ label: g.paths[0] ?? g.sha256, value: g.wastedBytes, said: `${g.copies} × ${formatBytes(g.size)}` })))}
${table('duplicates', ['Copies', 'Size', 'Wasted', 'Paths'], d.largestGroups.map((g) => [num(g.copies), size(g.size), size(g.wastedBytes), { lines: g.paths }]))}` : '<p id="no-duplicates">No two files have the same content.</p>'}
<h2>Largest files</h2>
${table('largest', ['Path', 'Size'], c.largest.map((f) => [text(f.path), size(f.value)]))}
<h2>Deepest and longest paths</h2>
${table('deepest', ['Path', 'Folders down'], c.deepest.map((f) => [text(f.path), num(f.value)]))}
${table('longest', ['Path', 'Bytes'], c.longest.map((f) => [text(f.path), num(f.value)]))}
${c.skippedCount ? `<h2>Skipped</h2>${table('skipped-table', ['Reason', 'Count', 'For example'], c.skipped.map((s) => [text(s.reason), num(s.count), { lines: s.examples }]))}` : ''}
${c.refusedCount ? `<h2>Names refused</h2>${table('refused', ['Path', 'Reason'], c.refused.map((f) => [text(f.path), text(f.reason)]))}` : ''}
${SORT_SCRIPT}
</body></html>
`;
}
