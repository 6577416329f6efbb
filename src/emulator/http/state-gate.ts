// The one thing that tells the emulator's requests their state was replaced under them. A reset
// or a snapshot restore swaps the whole state in one synchronous step; what was then under way and
// would write after it (an upload still streaming in, a document being scanned, a playbook import)
// must not land in the new state. Each such piece of work notes the generation it began in and
// asks `stillCurrent` before it writes; a body still streaming in is ended at once, so that a long
// upload fails when the state is replaced rather than minutes later.
import { type Gate, HttpError } from '../context.js';

interface Streaming {
  destroy(error?: Error): unknown;
}

export class StateGate implements Gate {
  private generation = 0;
  private readonly streaming = new Set<Streaming>();

  /** The generation of the state now. */
  get now(): number {
    return this.generation;
  }

  /** Whether nothing replaced the state since `since`. */
  stillCurrent(since: number): boolean {
    return since === this.generation;
  }

  /** Throws the 503 an upload gets when the state was replaced while it streamed in. */
  check(since: number): void {
    if (!this.stillCurrent(since)) throw replaced();
  }

  /** A body streaming into the state: ended with that 503 if the state is replaced first. Returns its release. */
  track(stream: Streaming): () => void {
    this.streaming.add(stream);
    return () => this.streaming.delete(stream);
  }

  /** Replaces the state: ends every body streaming in, then runs `swap` (synchronous) as the next generation. */
  replace<T>(swap: () => T): T {
    this.generation++;
    for (const stream of this.streaming) stream.destroy(replaced());
    this.streaming.clear();
    return swap();
  }
}

function replaced(): HttpError {
  return new HttpError(503, 'Service Unavailable', "The emulator's state was reset or restored while this request was under way; nothing of it was kept.");
}
