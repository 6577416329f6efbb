// The cost of checking what a pull receives against each document's sha256 (issue 76),
// `npm run bench -- --only=verify`: whole `ferry pull` processes, checked beside the same pull
// with --ignore-checksum, the side that goes first alternating round by round; a ratio is the
// median of the rounds' ratios (checked time over unchecked), with its spread, and the CPU time
// of both beside it (the machine is shared: CPU time is steadier than wall time).
//
//   one file of 1.5 GiB (random bytes), mirrored by ferry so that its document names its sha256
//   10,000 files of 4 KiB, the same
import { execFile } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FerryClient } from '../dist/src/index.js';
import { makeTree, startEmulatorProcess } from './lib.mjs';
import { emulatorEnv, ferryEnv, runFerry } from './ferry-process.mjs';

const run = promisify(execFile);

function spread(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)], min: sorted[0], max: sorted[sorted.length - 1], runs: sorted.length };
}

/** One emulator process on disk holding `src` mirrored by ferry (each document naming its sha256); pulls of it, checked and not. */
async function pullsOf(work, name, src, rounds, expected) {
  const data = join(work, `${name}-emulator`);
  await mkdir(data, { recursive: true });
  const emu = await startEmulatorProcess(data);
  const client = new FerryClient({ address: emu.address, credentials: emu.credentials });
  try {
    const project = (await client.projects.create({ name, description: 'bench verify' })).objectIdentifier;
    const seeded = await runFerry(work, `${name} seed`, ['mirror', src, '--project', project], { ...ferryEnv(work, `${name}-seed`), ...emulatorEnv(emu), FERRY_FORM_ORDER: 'any' });
    if (seeded.code !== 0 || seeded.json?.counts?.uploaded !== expected) throw new Error(`${name}: the seeding mirror: exit ${seeded.code}, ${JSON.stringify(seeded.json?.counts)}`);
    const side = (flags) => async (round) => {
      const out = join(work, `${name}-out`);
      await rm(out, { recursive: true, force: true });
      await run('sync', []);
      const r = await runFerry(work, `${name} pull`, ['pull', project, out, ...flags], { ...ferryEnv(work, `${name}-state-${flags.length}-${round}`), ...emulatorEnv(emu) });
      if (r.code !== 0 || r.json?.counts?.downloaded !== expected) throw new Error(`${name} pull ${flags.join(' ')}: exit ${r.code}, ${JSON.stringify(r.json?.counts)}`);
      if (!flags.length && r.json?.contentCheck?.verified !== expected) throw new Error(`${name}: the checked pull checked ${JSON.stringify(r.json?.contentCheck)}`);
      return r;
    };
    const sides = { checked: side([]), unchecked: side(['--ignore-checksum']) };
    const ms = { checked: [], unchecked: [] };
    const cpu = { checked: [], unchecked: [] };
    // One uncounted pass of each: the emulator's blobs in the page cache for both.
    await sides.unchecked(-1);
    await sides.checked(-1);
    for (let round = 0; round < rounds; round++) {
      for (const s of round % 2 === 0 ? ['checked', 'unchecked'] : ['unchecked', 'checked']) {
        const r = await sides[s](round);
        ms[s].push(r.ms);
        cpu[s].push(r.cpuMs);
      }
      console.error(`verify ${name} round ${round + 1}: checked ${Math.round(ms.checked[round])} ms (CPU ${Math.round(cpu.checked[round])}), unchecked ${Math.round(ms.unchecked[round])} ms (CPU ${Math.round(cpu.unchecked[round])})`);
    }
    return { ms, cpu };
  } finally {
    await client.close();
    await emu.stop();
    await rm(data, { recursive: true, force: true });
  }
}

export async function benchVerify({ work, record, results, rounds = 5, sizeMiB = 1536, files = 10_000 }) {
  results.spreads ??= {};
  const report = (label, { ms, cpu }) => {
    const wall = spread(ms.checked.map((c, i) => c / ms.unchecked[i]));
    const cpuRatio = spread(cpu.checked.map((c, i) => c / cpu.unchecked[i]));
    results.spreads[`verify ${label}`] = { wall, cpu: cpuRatio };
    const median = (v) => Math.round(spread(v).median);
    record(`pull ${label}, every download checked against its sha256, beside --ignore-checksum`, median(ms.checked), median(ms.unchecked), 'ms', wall.median, undefined, `information: ${rounds} rounds alternating, checked time over unchecked, per-round ratios ${wall.min.toFixed(2)}-${wall.max.toFixed(2)}; CPU time ${median(cpu.checked)} against ${median(cpu.unchecked)} ms (per-round ratios ${cpuRatio.median.toFixed(2)}, ${cpuRatio.min.toFixed(2)}-${cpuRatio.max.toFixed(2)})`);
  };

  const small = join(work, 'verify-small');
  await makeTree(small, files, 4096);
  report(`${files.toLocaleString('en-US')} files of 4 KiB`, await pullsOf(work, 'verify-small', small, rounds, files));
  await rm(small, { recursive: true, force: true });

  const big = join(work, 'verify-big');
  await mkdir(big, { recursive: true });
  await run('dd', ['if=/dev/urandom', `of=${join(big, 'big.bin')}`, 'bs=1M', `count=${sizeMiB}`], { maxBuffer: 1 << 20 });
  report(`one ${(sizeMiB / 1024).toFixed(1)} GiB file`, await pullsOf(work, 'verify-big', big, rounds, 1));
  await rm(big, { recursive: true, force: true });
}
