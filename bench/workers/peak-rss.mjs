// Loaded with `node --import` in front of a ferry command the scale bench runs: as the process
// exits, its own peak RSS (KiB) is written to BENCH_RSS_FILE. A whole process is what a user runs,
// and no other process can read another's maxRSS once it is gone.
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS)));
