// Loaded with `node --import` in front of a ferry command the scale and shapes benches run: as the
// process exits, its own peak RSS (KiB, ./peak.mjs) is written to BENCH_RSS_FILE. A whole process
// is what a user runs, and no other process can read another's peak once it is gone.
import { subscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { peakRssKiB } from './peak.mjs';

const file = process.env.BENCH_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(peakRssKiB())));
// Its CPU time (user and system, every thread), ms: where wall time is noise, the work done.
const cpuFile = process.env.BENCH_CPU_FILE;
if (cpuFile) process.on('exit', () => {
  const { user, system } = process.cpuUsage();
  writeFileSync(cpuFile, String((user + system) / 1000));
});
// When its first connection was made, ms from its start: what came before is start-up (Node, the
// modules, the store), which a transfer pays once whatever its size and curl hardly pays at all.
const startupFile = process.env.BENCH_STARTUP_FILE;
if (startupFile) {
  let first;
  subscribe('net.client.socket', () => (first ??= performance.now()));
  process.on('exit', () => writeFileSync(startupFile, String(first ?? '')));
}
