// Loaded with `node --import` in front of a ferry command the scale and shapes benches run: as the
// process exits, its own peak RSS (KiB, ./peak.mjs) is written to BENCH_RSS_FILE. A whole process
// is what a user runs, and no other process can read another's peak once it is gone.
import { writeFileSync } from 'node:fs';
import { peakRssKiB } from './peak.mjs';

const file = process.env.BENCH_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(peakRssKiB())));
// Its CPU time (user and system, every thread), ms: where wall time is noise, the work done.
const cpuFile = process.env.BENCH_CPU_FILE;
if (cpuFile) process.on('exit', () => {
  const { user, system } = process.cpuUsage();
  writeFileSync(cpuFile, String((user + system) / 1000));
});
