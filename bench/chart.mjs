// The scale bench's figures as an SVG chart (docs/performance-scale.svg): time per item and ferry's
// peak RSS against items, both axes log scale, one line per step, whiskers from the fastest to the
// slowest round. Written by hand: it is a few dozen lines of <path> and <text>, and a charting
// library would bring a browser or a canvas into the bench for them.

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];
const W = 460;
const H = 320;
const M = { left: 64, right: 28, top: 36, bottom: 48 };

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const decades = (lo, hi) => {
  const out = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) out.push(10 ** e);
  return out;
};
/** Grid lines at 1, 2 and 5 of each decade when the values span less than two decades (a log axis is otherwise bare). */
const gridOf = (ends) => (ends.length > 3 ? ends : ends.flatMap((v, i) => (i < ends.length - 1 ? [v, 2 * v, 5 * v] : [v])));
const label = (v) => (v >= 1e6 ? `${v / 1e6}M` : v >= 1e3 ? `${v / 1e3}k` : `${v}`);

/** One panel: x = items, y = value(point) for each step's sizes; log-log. */
function panel(x0, title, unit, series, value, whisker) {
  const points = series.flatMap((s) => s.sizes.map((p) => [p.size, value(p)]));
  const xs = decades(Math.min(...points.map((p) => p[0])), Math.max(...points.map((p) => p[0])));
  const ys = decades(Math.min(...points.map((p) => p[1])) * 0.9, Math.max(...points.map((p) => p[1])) * 1.1);
  const lx = (v) => x0 + M.left + ((Math.log10(v) - Math.log10(xs[0])) / (Math.log10(xs.at(-1)) - Math.log10(xs[0]))) * (W - M.left - M.right);
  const ly = (v) => H - M.bottom - ((Math.log10(v) - Math.log10(ys[0])) / (Math.log10(ys.at(-1)) - Math.log10(ys[0]) || 1)) * (H - M.top - M.bottom);
  const out = [`<text x="${x0 + W / 2}" y="20" text-anchor="middle" font-weight="bold">${esc(title)}</text>`];
  for (const v of xs) out.push(`<line x1="${lx(v)}" x2="${lx(v)}" y1="${M.top}" y2="${H - M.bottom}" stroke="#ddd"/><text x="${lx(v)}" y="${H - M.bottom + 16}" text-anchor="middle">${label(v)}</text>`);
  for (const v of gridOf(ys)) out.push(`<line x1="${x0 + M.left}" x2="${x0 + W - M.right}" y1="${ly(v)}" y2="${ly(v)}" stroke="#ddd"/><text x="${x0 + M.left - 6}" y="${ly(v) + 4}" text-anchor="end">${label(v)}</text>`);
  out.push(`<text x="${x0 + W / 2}" y="${H - 10}" text-anchor="middle">items (log)</text>`);
  out.push(`<text transform="translate(${x0 + 16} ${H / 2}) rotate(-90)" text-anchor="middle">${esc(unit)} (log)</text>`);
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const d = s.sizes.map((p, j) => `${j ? 'L' : 'M'}${lx(p.size).toFixed(1)},${ly(value(p)).toFixed(1)}`).join(' ');
    out.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2"/>`);
    for (const p of s.sizes) {
      out.push(`<circle cx="${lx(p.size).toFixed(1)}" cy="${ly(value(p)).toFixed(1)}" r="3" fill="${color}"><title>${esc(`${s.step}, ${p.size} items: ${value(p).toFixed(1)} ${unit}`)}</title></circle>`);
      const w = whisker?.(p);
      if (w && w[0] !== w[1]) out.push(`<line x1="${lx(p.size).toFixed(1)}" x2="${lx(p.size).toFixed(1)}" y1="${ly(w[0]).toFixed(1)}" y2="${ly(w[1]).toFixed(1)}" stroke="${color}"/>`);
    }
  });
  return out;
}

const count = (n) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : `${n}`);

export function renderScaleChart(result) {
  const series = result.steps;
  const top = 28; // the subtitle above both panels
  const parts = [
    ...panel(0, 'time per item', 'µs', series, (p) => p.msPerItem.median * 1000, (p) => [p.msPerItem.min * 1000, p.msPerItem.max * 1000]),
    ...panel(W, "ferry's peak RSS", 'MiB', series, (p) => p.ferryRssMiB),
  ];
  // Two columns, a panel's width each, one entry to a row: no entry runs into the next.
  const columns = 2;
  const legend = series.map((s, i) => {
    const [large, small] = s.ratioOf.split(' over ').map(Number);
    const text = `${s.step}: ${s.ratio.toFixed(2)}× the time per item at ${count(large)} as at ${count(small)}`;
    return `<g transform="translate(${M.left + (i % columns) * W} ${top + H + 14 + Math.floor(i / columns) * 20})"><rect width="14" height="4" y="-4" fill="${COLORS[i % COLORS.length]}"/><text x="20" y="0">${esc(text)}</text></g>`;
  });
  const height = top + H + 14 + Math.ceil(series.length / columns) * 20 + 8;
  const subtitle = `Every point from one run (${result.date.slice(0, 10)}, ${result.cpus} cores, Node ${result.node}, ${result.minutes} min); whiskers: fastest to slowest round`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W * 2}" height="${height}" viewBox="0 0 ${W * 2} ${height}" font-family="sans-serif" font-size="12">
<desc>${esc(`ferry scale bench, ${result.date}, node ${result.node}, ${result.cpus} cpus; written by bench/scale.mjs from bench/results/latest-scale.json`)}</desc>
<rect width="100%" height="100%" fill="white"/>
<text x="${W}" y="16" text-anchor="middle" fill="#444">${esc(subtitle)}</text>
<g transform="translate(0 ${top})">
${parts.join('\n')}
</g>
${legend.join('\n')}
</svg>
`;
}
