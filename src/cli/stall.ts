// A net under ferry's own bugs: when every promise left waits on one that can never settle, Node
// has nothing more to do and exits (13, for the entry's top-level await) without a word, and a
// cron job sees neither an error nor, under --json, the one object every exit owes it. Said here
// instead, as the process exits, with exit code 1.
import { writeSync } from 'node:fs';
import { envelope } from './envelope.js';
import { EXIT } from './exit-codes.js';

export const STALLED = 'the run stopped waiting on work that could never finish (a fault of ferry\'s own: please report it with the output of -v); what was in flight is settled by the next run, or ferry jobs resume';

/**
 * Installs the net; `json` under --json. The entry always ends with an explicit exit, which emits
 * no 'beforeExit': that event means the loop ran dry before the command did. What stdout was
 * given before is not added to.
 */
export function installStallNet(json: boolean): void {
  let wrote = false;
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((...args: Parameters<typeof write>) => {
    wrote = true;
    return write(...args);
  }) as typeof process.stdout.write;
  process.once('beforeExit', () => {
    writeSync(2, `ferry: ${STALLED}\n`);
    // An object half written (a streamed listing) cannot be closed from here: only a fresh one.
    if (json && !wrote) writeSync(1, `${JSON.stringify(envelope('error', EXIT.failed, { error: STALLED }))}\n`);
    process.exit(EXIT.failed);
  });
}
