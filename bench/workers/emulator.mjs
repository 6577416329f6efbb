// Runs the emulator in its own process for the benchmarks; prints its description as one line.
// BENCH_RATE_LIMIT=rps,burst turns the per-client token bucket on; BENCH_FAULTS=spec injects
// faults (the `ferry emulator --faults` syntax). BENCH_TLS=cert.pem,key.pem serves https.
// SIGUSR2 prints `{"requests":N}`: the HTTP requests it has been sent so far (counted as Node's
// server starts each one, so a step of the scale bench knows what it cost the service).
import { subscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { startEmulator } from '../../dist/src/emulator/index.js';

let requests = 0;
subscribe('http.server.request.start', () => requests++);
process.on('SIGUSR2', () => process.stdout.write(`${JSON.stringify({ requests })}\n`));

const dataDir = process.argv[2];
const [rps, burst] = (process.env.BENCH_RATE_LIMIT ?? '').split(',').map(Number);
const [cert, key] = (process.env.BENCH_TLS ?? '').split(',');
const handle = await startEmulator({
  port: 0,
  processing: { minDelayMs: 1, maxDelayMs: 5, seed: 1 },
  ...(dataDir ? { dataDir } : {}),
  ...(rps ? { rateLimit: { rps, burst: burst || rps } } : {}),
  ...(process.env.BENCH_FAULTS ? { faults: process.env.BENCH_FAULTS } : {}),
  ...(cert && key ? { tls: { cert: readFileSync(cert), key: readFileSync(key) } } : {}),
});
process.stdout.write(`${JSON.stringify(handle.describe())}\n`);
process.on('SIGTERM', async () => {
  await handle.close();
  process.exit(0);
});
