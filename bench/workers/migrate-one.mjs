// Migrates one project between the two emulators described on argv, then prints its summary and
// its own peak RSS (a process of its own, so the bench's memory does not count).
import { peakRssKiB } from './peak.mjs';
import { migrate } from '../../dist/jobs/migrate.js';
import { FerryClient } from '../../dist/src/index.js';
import { SqliteCheckpointStore } from '../../dist/src/store/index.js';

const [project, state, fromJson, toJson, concurrency] = process.argv.slice(2);
const client = (emu) => new FerryClient({ address: emu.address, credentials: emu.credentials, timeoutMs: 600_000 });
const from = client(JSON.parse(fromJson));
const to = client(JSON.parse(toJson));
const store = new SqliteCheckpointStore(state);
const started = process.hrtime.bigint();
const summary = await migrate({ projects: [project], concurrency: Number(concurrency) }, { from, to, store });
const ms = Number(process.hrtime.bigint() - started) / 1e6;
store.close();
await Promise.all([from.close(), to.close()]);
process.stdout.write(`${JSON.stringify({ status: summary.status, counts: summary.counts, bytes: summary.bytes, ms, maxRssKiB: peakRssKiB() })}\n`);
