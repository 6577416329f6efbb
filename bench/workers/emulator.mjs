// Runs the emulator in its own process for the benchmarks; prints its description as one line.
import { startEmulator } from '../../dist/src/emulator/index.js';

const dataDir = process.argv[2];
const handle = await startEmulator({ port: 0, processing: { minDelayMs: 1, maxDelayMs: 5, seed: 1 }, ...(dataDir ? { dataDir } : {}) });
process.stdout.write(`${JSON.stringify(handle.describe())}\n`);
process.on('SIGTERM', async () => {
  await handle.close();
  process.exit(0);
});
