// Mirrors SOURCE into the emulator described on stdin-less argv, then prints its own peak RSS.
import { peakRssKiB } from './peak.mjs';
import { mirror } from '../../dist/jobs/mirror.js';
import { FerryClient } from '../../dist/src/index.js';
import { SqliteCheckpointStore } from '../../dist/src/store/index.js';

const [source, state, emulatorJson] = process.argv.slice(2);
const emu = JSON.parse(emulatorJson);
const client = new FerryClient({ address: emu.address, credentials: emu.credentials, timeoutMs: 600_000 });
const store = new SqliteCheckpointStore(state);
const summary = await mirror({ source, project: emu.project, progress: false, concurrency: 4 }, { client, store });
store.close();
await client.close();
process.stdout.write(`${JSON.stringify({ status: summary.status, uploaded: summary.counts.uploaded, bytes: summary.bytes, maxRssKiB: peakRssKiB() })}\n`);
