// This process's peak RSS, KiB. On Linux, VmHWM of /proc/self/status: getrusage's maxRSS also
// counts the RSS the parent had when it forked this process (measured: a bench holding 600 MiB
// gave a 40 MiB child a maxRSS of 604 MiB). Elsewhere, maxRSS.
import { readFileSync } from 'node:fs';

export function peakRssKiB() {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]);
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS;
}
