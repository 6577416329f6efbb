import { setMaxListeners } from 'node:events';
import { endLiveLine } from './terminal.js';

// SIGINT/SIGTERM: the first one asks the job to stop taking work and settle what is in flight;
// a second one exits at once (the checkpoint store makes even that safe to resume).
export interface StopHandle {
  signal: AbortSignal;
  /** Which signal stopped the job, if any. */
  reason(): NodeJS.Signals | undefined;
  dispose(): void;
}

/** What the process says as it exits at once on a second signal (the CLI's one JSON answer). */
let lastWords: ((sig: NodeJS.Signals, code: number) => void) | undefined;

export function onImmediateExit(say: ((sig: NodeJS.Signals, code: number) => void) | undefined): void {
  lastWords = say;
}

export function stopOnSignals(onFirst?: (sig: NodeJS.Signals) => void): StopHandle {
  const controller = new AbortController();
  // Every request in flight listens to this one signal; dozens at once are expected, not a leak.
  setMaxListeners(10_000, controller.signal);
  let received: NodeJS.Signals | undefined;
  const handler = (sig: NodeJS.Signals) => {
    if (received) {
      const code = 128 + (sig === 'SIGINT' ? 2 : 15);
      endLiveLine();
      lastWords?.(sig, code);
      process.exit(code);
    }
    received = sig;
    onFirst?.(sig);
    controller.abort(new Error(`stopped by ${sig}`));
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: controller.signal,
    reason: () => received,
    dispose() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
