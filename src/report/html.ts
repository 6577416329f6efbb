// What ferry's self-contained pages share (the batch report, the scan): escaping, one style, bar
// charts as inline SVG, and tables sorted by a click on a column. Nothing is fetched: no script,
// style or font from the network. Every text from a file or the service passes through `esc`.
import { visible } from '../text.js';

/** Text for HTML: controls made visible (as a terminal shows them), then the markup characters escaped. */
export function esc(text: string | number | null | undefined): string {
  return visible(String(text ?? '')).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

export const PALETTE = ['#c0392b', '#d35400', '#8e44ad', '#2c3e50', '#16a085', '#7f8c8d', '#27ae60', '#2980b9', '#f39c12'];

export const PAGE_STYLE = `body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:60rem;color:#222;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#f4f4f4}th button{all:unset;cursor:pointer;font-weight:600}th button::after{content:" \\2195";color:#999}
td.n{text-align:right}td.id{font-family:ui-monospace,monospace;font-size:.8rem;color:#555}
.totals{display:flex;gap:1rem;flex-wrap:wrap}.totals div{background:#f4f4f4;padding:.6rem 1rem;border-radius:6px}
.totals b{display:block;font-size:1.3rem}svg text{font-size:13px}`;

export interface Bar {
  label: string;
  value: number;
  /** What the bar says beside it (default: the value). */
  said?: string;
}

/** Horizontal bars, one per row, as inline SVG; each row a `g.bar` carrying its label and value. */
export function barChart(id: string, label: string, bars: readonly Bar[]): string {
  if (bars.length === 0) return '';
  const rowHeight = 28;
  const labelWidth = 190;
  const barWidth = 420;
  const max = Math.max(1, ...bars.map((b) => b.value));
  const rows = bars
    .map((b, i) => {
      const y = i * rowHeight;
      const w = Math.max(2, Math.round((b.value / max) * barWidth));
      return `<g class="bar" data-label="${esc(b.label)}" data-value="${b.value}"><text x="0" y="${y + 18}">${esc(b.label)}</text>` +
        `<rect x="${labelWidth}" y="${y + 5}" width="${w}" height="18" fill="${PALETTE[i % PALETTE.length]}"><title>${esc(b.label)}: ${esc(b.said ?? b.value)}</title></rect>` +
        `<text x="${labelWidth + w + 6}" y="${y + 18}">${esc(b.said ?? b.value)}</text></g>`;
    })
    .join('');
  return `<svg id="${id}" role="img" aria-label="${esc(label)}" width="${labelWidth + barWidth + 140}" height="${bars.length * rowHeight}">${rows}</svg>`;
}

/**
 * Sorting for every `table.sortable`: a click on a header's button sorts by its column, again
 * reverses. A cell's `data-v` (a number) sorts it where its text is a size or a share.
 */
export const SORT_SCRIPT = `<script>
document.querySelectorAll('table.sortable').forEach(function (table) {
  var buttons = table.querySelectorAll('th button');
  buttons.forEach(function (button) {
    button.addEventListener('click', function () {
      var col = Number(button.dataset.col);
      var body = table.querySelector('tbody');
      var asc = button.dataset.dir !== 'asc';
      buttons.forEach(function (b) { delete b.dataset.dir; });
      button.dataset.dir = asc ? 'asc' : 'desc';
      var key = function (row) { var c = row.cells[col]; return c.dataset.v !== undefined ? Number(c.dataset.v) : c.textContent; };
      Array.from(body.rows)
        .sort(function (a, b) { var x = key(a), y = key(b); var d = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y)); return asc ? d : -d; })
        .forEach(function (row) { body.appendChild(row); });
    });
  });
});
</script>`;
