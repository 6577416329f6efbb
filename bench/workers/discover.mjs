// Walks a tree the way the mirror discovers it (or, with "bare", a plain fast-glob walk with
// stats), counts entries, and prints its own peak RSS.
import { peakRssKiB } from './peak.mjs';
import fg from 'fast-glob';
import { FolderSource } from '../../dist/src/backends/folder/source.js';

const [mode, root] = process.argv.slice(2);
let files = 0;
const started = process.hrtime.bigint();
if (mode === 'bare') {
  for await (const entry of fg.stream('**', { cwd: root, dot: true, stats: true, objectMode: true, onlyFiles: false })) if (entry.stats.isFile()) files++;
} else {
  for await (const entry of new FolderSource(root).entries()) if (entry.kind === 'file') files++;
}
const ms = Number(process.hrtime.bigint() - started) / 1e6;
process.stdout.write(`${JSON.stringify({ files, ms, maxRssKiB: peakRssKiB() })}\n`);
