// One way to answer. Text or JSON is decided once per command, from --json, into the Reply the
// command writes through: under --json its one envelope on stdout ({command, status, exitCode, …},
// docs/json-output.schema.json), whatever the exit; in text, the renderer that sits beside each
// JSON body. What a job shows while it runs (its Display) follows from the same choice: progress
// beside a text answer, nothing beside a JSON one. (Before commander has parsed the command line,
// reply-mode.ts decides the same from the words alone.)
import type { Display } from '../runner/progress.js';
import type { JobSummary } from '../runner/job.js';
import { safeText } from '../text.js';
import { writeEnvelope } from './envelope.js';
import { JsonItems } from './json-items.js';
import { summaryEnvelope, summaryText } from './output.js';

export class Reply {
  constructor(
    /** --json was given. */
    readonly json: boolean,
    /** --stats (or a job file's `stats:`): how often a run off a terminal records its progress. */
    private readonly statsIntervalMs?: number | undefined,
    private readonly out: NodeJS.WritableStream = process.stdout,
    private readonly err: NodeJS.WritableStream = process.stderr,
  ) {}

  /** The reply a command's parsed options ask for. */
  static to(opts: { json?: unknown }, statsIntervalMs?: number): Reply {
    return new Reply(opts.json === true, statsIntervalMs);
  }

  /** What a job shows while it runs. */
  get display(): Display {
    return { progress: !this.json, statsIntervalMs: this.statsIntervalMs };
  }

  /** The command's answer: `body` in its envelope under --json, else `text` (nothing when it gives undefined). */
  answer(status: string, exitCode: number, body: Record<string, unknown>, text: () => string | undefined): void {
    if (this.json) return writeEnvelope(status, exitCode, body, this.out);
    const said = text();
    if (said) this.out.write(said.endsWith('\n') ? said : `${said}\n`);
  }

  /**
   * A listing's answer under --json: one envelope whose `key` array is written item by item as the
   * listing goes (json-items.ts); undefined in text, where the command writes its lines itself.
   */
  listing(head: Record<string, unknown>, key?: string): JsonItems | undefined {
    return this.json ? new JsonItems(head, this.out, key) : undefined;
  }

  /** Text that the envelope carries in its own fields: written only when the answer is text. */
  text(text: string | (() => string)): void {
    if (this.json) return;
    const said = typeof text === 'string' ? text : text();
    if (said) this.out.write(said.endsWith('\n') ? said : `${said}\n`);
  }

  /**
   * A job's summary: its envelope, `extra` fields after the summary's own, or its text (`text`, a
   * job's own renderer, else the transfer's). `exitCode` and `status` when the command's differ
   * from the run's (a migration that does not verify); `reopen` as summaryText's.
   */
  summary(summary: JobSummary, o: { reopen?: string; extra?: Record<string, unknown>; exitCode?: number; status?: string | undefined; text?: (summary: JobSummary) => string } = {}): void {
    if (this.json) this.out.write(`${JSON.stringify({ ...summaryEnvelope(summary, o.exitCode, o.status, o.reopen), ...o.extra })}\n`);
    else this.out.write(o.text ? o.text(summary) : summaryText(summary, o.reopen));
  }

  /**
   * An exit without a summary (a held lock, a job that could not start): one line on stderr, and
   * under --json the one envelope, `error` its message.
   */
  error(exitCode: number, message: string, extra: Record<string, unknown> = {}, status = 'error'): void {
    this.err.write(`ferry: ${safeText(message)}\n`);
    if (this.json) writeEnvelope(status, exitCode, { error: message, ...extra }, this.out);
  }
}
