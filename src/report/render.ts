// One BatchReport, five formats. The HTML one is a single self-contained file: inline CSS, an
// inline SVG chart and a few lines of inline script for sorting; nothing is fetched.
import { formatBytes, formatDuration, visible } from '../text.js';
import type { BatchReport } from './model.js';
import { esc, PAGE_STYLE, PALETTE, SORT_SCRIPT } from './html.js';

export const REPORT_FORMATS = ['text', 'json', 'csv', 'markdown', 'html'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export function renderReport(report: BatchReport, format: ReportFormat): string {
  switch (format) {
    case 'json':
      return `${JSON.stringify(report, null, 2)}\n`;
    case 'csv':
      return renderCsv(report);
    case 'markdown':
      return renderMarkdown(report);
    case 'html':
      return renderHtml(report);
    default:
      return renderText(report);
  }
}

function totalsLine(r: BatchReport): string {
  const t = r.totals;
  return `${t.files} files, ${formatBytes(t.bytes)}: ${t.completed} completed, ${t.failed} failed, ${t.processing} still processing` +
    (t.durationMs !== null ? `, ${formatDuration(t.durationMs)}` : '');
}

function bar(share: number, width = 30): string {
  const filled = Math.round(share * width);
  return `${'#'.repeat(filled)}${'.'.repeat(width - filled)}`;
}

function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

export function renderText(r: BatchReport): string {
  const lines = [
    r.playbookIdentifier ? `upload batch ${visible(r.name ?? '')} (${r.uploadIdentifier}) of playbook ${r.playbookIdentifier}` : `batch ${r.uploadIdentifier} of project ${r.project ?? '(unknown)'} (counted from its documents)`,
    `  ${totalsLine(r)}`,
    `  ${r.dateCompleted ? `completed ${r.dateCompleted}` : 'not completed yet'}`,
  ];
  if (r.reasons.length) {
    lines.push('', 'why files failed:');
    const width = Math.max(...r.reasons.map((x) => x.reason.length));
    for (const x of r.reasons) {
      lines.push(`  ${x.reason.padEnd(width)} ${String(x.count).padStart(6)} ${percent(x.share).padStart(6)} ${bar(x.share)}`);
      lines.push(`  ${' '.repeat(width)} ${x.meaning}; ${x.action}`);
    }
  } else {
    lines.push('', 'no file failed');
  }
  if (r.fileTypes.length) lines.push('', `file types: ${r.fileTypes.map((f) => `${f.type} ${f.count}`).join(', ')}`);
  if (r.failedFiles.length) {
    lines.push('', 'failed files:');
    for (const f of r.failedFiles) lines.push(`  ${f.reason.padEnd(22)} ${visible(f.localPath ?? `(remote) ${f.name}`)}  [${f.remoteId}]`);
  }
  if (r.failedFilesNote) lines.push('', `note: ${r.failedFilesNote}`);
  return `${lines.join('\n')}\n`;
}

function csvCell(value: string | number | null): string {
  const text = value === null ? '' : String(value);
  // Spreadsheet formula injection: a leading = + - @ is neutralised.
  const safe = /^[=+\-@]/.test(text) ? `'${text}` : text;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** One row per failed file: what a spreadsheet user wants to filter and hand on. */
export function renderCsv(r: BatchReport): string {
  const rows = [['local_path', 'name', 'remote_id', 'reason', 'meaning', 'what_to_do']];
  const help = new Map(r.reasons.map((x) => [x.reason, x]));
  for (const f of r.failedFiles) {
    const h = help.get(f.reason);
    rows.push([visible(f.localPath ?? ''), visible(f.name), f.remoteId, f.reason, h?.meaning ?? '', h?.action ?? '']);
  }
  return `${rows.map((row) => row.map(csvCell).join(',')).join('\r\n')}\r\n`;
}

/**
 * Text from names made inert in Markdown: HTML is escaped as entities (renderers pass raw HTML
 * through), Markdown's own punctuation is backslash-escaped, and controls are made visible.
 */
function mdCell(text: string): string {
  return esc(text).replace(/[\\`*_[\]|~]/g, (c) => `\\${c}`);
}

export function renderMarkdown(r: BatchReport): string {
  const lines = [`# Upload batch ${mdCell(r.name ?? r.uploadIdentifier)}`, '', `${totalsLine(r)}.`, ''];
  if (r.reasons.length) {
    lines.push('## Why files failed', '', '| reason | files | share | what it means | what to do |', '|---|---:|---:|---|---|');
    for (const x of r.reasons) lines.push(`| ${x.reason} | ${x.count} | ${percent(x.share)} | ${mdCell(x.meaning)} | ${mdCell(x.action)} |`);
    lines.push('');
  }
  if (r.fileTypes.length) {
    lines.push('## File types', '', '| type | files |', '|---|---:|', ...r.fileTypes.map((f) => `| ${f.type} | ${f.count} |`), '');
  }
  if (r.failedFiles.length) {
    lines.push('## Failed files', '', '| local path | reason | document |', '|---|---|---|');
    for (const f of r.failedFiles) lines.push(`| ${mdCell(f.localPath ?? f.name)} | ${f.reason} | ${f.remoteId} |`);
    lines.push('');
  }
  if (r.failedFilesNote) lines.push(`> ${r.failedFilesNote}`, '');
  return lines.join('\n');
}

/** Horizontal bars, one per reason, drawn as inline SVG. */
function chart(r: BatchReport): string {
  if (r.reasons.length === 0) return '<p id="no-failures">No file failed.</p>';
  const rowHeight = 28;
  const labelWidth = 190;
  const barWidth = 420;
  const max = Math.max(...r.reasons.map((x) => x.count));
  const bars = r.reasons
    .map((x, i) => {
      const y = i * rowHeight;
      const w = Math.max(2, Math.round((x.count / max) * barWidth));
      return `<g class="reason" data-reason="${esc(x.reason)}"><text x="0" y="${y + 18}">${esc(x.reason)}</text>` +
        `<rect x="${labelWidth}" y="${y + 5}" width="${w}" height="18" fill="${PALETTE[i % PALETTE.length]}"><title>${esc(x.reason)}: ${x.count}</title></rect>` +
        `<text x="${labelWidth + w + 6}" y="${y + 18}">${x.count} (${percent(x.share)})</text></g>`;
    })
    .join('');
  return `<svg id="reasons-chart" role="img" aria-label="failed files by reason" width="${labelWidth + barWidth + 120}" height="${r.reasons.length * rowHeight}">${bars}</svg>`;
}

export function renderHtml(r: BatchReport): string {
  const reasonRows = r.reasons
    .map((x) => `<tr><td>${esc(x.reason)}</td><td class="n">${x.count}</td><td class="n">${percent(x.share)}</td><td>${esc(x.meaning)}</td><td>${esc(x.action)}</td></tr>`)
    .join('');
  const fileRows = r.failedFiles
    .map((f) => `<tr><td>${esc(f.localPath ?? f.name)}</td><td>${esc(f.reason)}</td><td class="id">${esc(f.remoteId)}</td></tr>`)
    .join('');
  const types = r.fileTypes.map((f) => `<li>${esc(f.type)}: ${f.count}</li>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Upload report: ${esc(r.name ?? r.uploadIdentifier)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
${PAGE_STYLE}
</style></head><body>
<h1>Upload report: ${esc(r.name ?? r.uploadIdentifier)}</h1>
<p>Batch <code>${esc(r.uploadIdentifier)}</code> of ${r.playbookIdentifier ? `playbook <code>${esc(r.playbookIdentifier)}</code>` : `project <code>${esc(r.project ?? '(unknown)')}</code>`}; ${r.dateCompleted ? `completed ${esc(r.dateCompleted)}` : 'not completed yet'}. Generated ${esc(r.generatedAt)}.</p>
<div class="totals">
<div><b id="total-files">${r.totals.files}</b>files</div><div><b>${esc(formatBytes(r.totals.bytes))}</b>uploaded</div>
<div><b id="total-completed">${r.totals.completed}</b>completed</div><div><b id="total-failed">${r.totals.failed}</b>failed</div>
<div><b>${r.totals.processing}</b>still processing</div>${r.totals.durationMs !== null ? `<div><b>${esc(formatDuration(r.totals.durationMs))}</b>duration</div>` : ''}
</div>
<h2>Why files failed</h2>
${chart(r)}
${r.reasons.length ? `<table id="reasons"><thead><tr><th>Reason</th><th>Files</th><th>Share</th><th>What it means</th><th>What to do</th></tr></thead><tbody>${reasonRows}</tbody></table>` : ''}
${types ? `<h2>File types</h2><ul id="file-types">${types}</ul>` : ''}
<h2>Failed files</h2>
${r.failedFiles.length ? `<table id="failed-files" class="sortable"><thead><tr><th><button data-col="0">Local path</button></th><th><button data-col="1">Reason</button></th><th><button data-col="2">Document</button></th></tr></thead><tbody>${fileRows}</tbody></table>` : `<p>${esc(r.failedFilesNote ?? 'None.')}</p>`}
${SORT_SCRIPT}
</body></html>
`;
}
