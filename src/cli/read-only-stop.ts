// A command that only reads (watch, report) has nothing to settle when it is stopped: the first
// SIGINT or SIGTERM ends it at once, as docs/cli.md promises of every command: one JSON object
// under --json, status `interrupted`, exit 3; a line on stderr otherwise. Nothing was changed, and
// the same command run again picks up where the service is.
import { stopOnSignals } from '../runner/signals.js';
import { endLiveLine } from '../runner/terminal.js';
import { writeEnvelope } from './envelope.js';
import { EXIT } from './exit-codes.js';
import type { Reply } from './reply.js';

/** Installs the ending; `said` is what the command had opened by then (its JSON fields). The returned function removes it. */
export function endOnFirstSignal(reply: Reply, said: () => Record<string, unknown>): () => void {
  const stop = stopOnSignals((sig) => {
    endLiveLine();
    const error = `${sig} received: stopped; this command only reads, so nothing was changed: run it again to go on`;
    if (reply.json) writeEnvelope('interrupted', EXIT.aborted, { error, ...said() });
    else process.stderr.write(`ferry: ${error}\n`);
    process.exit(EXIT.aborted);
  });
  return () => stop.dispose();
}
