// The scale bench's figures where people read them: the chart (docs/performance-scale.svg) and the
// table between the markers of docs/performance.md, both written from bench/results/latest-scale.json
// by the bench itself (`npm run bench -- --scale`), or again from that file alone
// (`npm run bench -- --scale-render`), never by hand.
import { readFile, writeFile } from 'node:fs/promises';
import { renderScaleChart } from './chart.mjs';

const BEGIN = '<!-- scale-table:begin (written by npm run bench -- --scale) -->';
const END = '<!-- scale-table:end -->';
const us = (ms) => `${Math.round(ms * 1000)}`;
const count = (n) => n.toLocaleString('en-US');

/** The table: a row per step and size, with the spread of its rounds and its ratio. */
export function renderScaleTable(result) {
  const rows = ['| step | items | rounds | µs an item (median, min-max) | requests an item | ferry peak RSS | emulator peak RSS |', '|---|---:|---:|---|---:|---:|---:|'];
  for (const s of result.steps) {
    for (const x of s.sizes) {
      const spread = x.msPerItem.rounds > 1 ? ` (${us(x.msPerItem.min)}-${us(x.msPerItem.max)})` : '';
      rows.push(`| ${s.step} | ${count(x.size)} | ${x.msPerItem.rounds} | ${us(x.msPerItem.median)}${spread} | ${x.requestsPerItem.median.toFixed(3)} | ${x.ferryRssMiB} MiB | ${x.emulatorRssMiB} MiB |`);
    }
  }
  rows.push('', '| step | time an item, largest size over 10,000 | within 1.2 | ferry peak RSS within 250 MiB |', '|---|---|---|---|');
  for (const s of result.steps) rows.push(`| ${s.step} | ${s.ratio.toFixed(2)} (${s.ratioOf.replace(/\d+/g, (n) => count(Number(n)))}) | ${s.flat ? 'yes' : '**no**'} | ${s.rssWithin ? 'yes' : '**no**'} |`);
  rows.push('', `Measured ${result.date.slice(0, 10)} on ${result.cpus} cores and ${result.memGiB} GiB, Node ${result.node}; ${result.files}; ${result.minutes} minutes in all. Sizes above ${count(result.seededAbove)} are a project written into the emulator's database (see bench/scale.mjs), measured once.`);
  return rows.join('\n');
}

export async function writeScaleReport(result) {
  const svg = new URL('../docs/performance-scale.svg', import.meta.url);
  await writeFile(svg, renderScaleChart(result));
  const doc = new URL('../docs/performance.md', import.meta.url);
  const text = await readFile(doc, 'utf8');
  const from = text.indexOf(BEGIN);
  const to = text.indexOf(END);
  if (from < 0 || to < from) throw new Error(`docs/performance.md has no ${BEGIN} ... ${END} block to write the table into`);
  await writeFile(doc, `${text.slice(0, from + BEGIN.length)}\n${renderScaleTable(result)}\n${text.slice(to)}`);
  return { svg: svg.pathname, doc: doc.pathname };
}

/** `--scale-render`: the chart and the table again from the last results. */
export async function renderFromResults() {
  const result = JSON.parse(await readFile(new URL('./results/latest-scale.json', import.meta.url), 'utf8'));
  const written = await writeScaleReport(result);
  console.log(`chart written to ${written.svg}, table to ${written.doc}`);
}
