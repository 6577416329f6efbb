// One JSON object on one line whose `items` are written as they come: the shape of every --json
// listing (ls, playbooks list, jobs list, dry runs), so that a listing of a million entries is never
// held in memory. `command` and the head's fields come first, then the items, then the tail's
// fields with `status` and `exitCode` (known only at the end of a streamed listing).
import { commandName } from './envelope.js';

export class JsonItems {
  private count = 0;
  private started = false;

  constructor(
    private readonly head: Record<string, unknown>,
    private readonly out: NodeJS.WritableStream = process.stdout,
    /** The name of the streamed array (`differences` for a comparison). */
    private readonly key = 'items',
  ) {}

  /** Whether anything was written yet: after that, an error can only close the object. */
  get opened(): boolean {
    return this.started;
  }

  item(value: unknown): void {
    if (!this.started) this.open();
    this.out.write(`${this.count === 0 ? '' : ','}${JSON.stringify(value)}`);
    this.count++;
  }

  end(status: string, exitCode: number, tail: Record<string, unknown> = {}): void {
    if (!this.started) this.open();
    this.out.write(`],${JSON.stringify({ ...tail, status, exitCode }).slice(1)}\n`);
  }

  private open(): void {
    this.started = true;
    this.out.write(`${JSON.stringify({ command: commandName(), ...this.head }).slice(0, -1)},${JSON.stringify(this.key)}:[`);
  }
}
