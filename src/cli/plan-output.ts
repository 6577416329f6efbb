// What a dry run prints: the plan's counts and the names of what the run would do. Text lists the
// first SHOWN names and says how many more; --json writes every one into the `items` of one JSON
// object (one line) as the plan meets them, so a plan of a million files is never held in memory.
import type { PlannedItem } from '../sync/engine.js';
import { formatBytes } from '../runner/format.js';
import { visible } from '../backends/names.js';
import { JsonItems } from './json-items.js';

const SHOWN = 20;

export class PlanOutput {
  private readonly shown: { action: string; key: string; size?: number }[] = [];
  private count = 0;
  private readonly items: JsonItems | undefined;

  constructor(
    json: boolean,
    command: string,
    /** What writing means here: upload, download. */
    private readonly verb: string,
    /** What an item gone from the source is called here. */
    private readonly gone = 'deleted locally',
  ) {
    if (json) this.items = new JsonItems({ command, dryRun: true });
  }

  readonly item = (planned: PlannedItem): void => {
    const item = planned.action === 'deleted locally' ? { ...planned, action: this.gone } : planned;
    this.count++;
    if (this.items) this.items.item(item);
    else if (this.shown.length < SHOWN) this.shown.push(item);
  };

  /** The end: `fields` close the JSON object; in text, `head` and then the names. */
  finish(fields: Record<string, unknown>, head: string): void {
    if (this.items) {
      this.items.end({ itemCount: this.count, ...fields });
      return;
    }
    const lines = [head.replace(/\n$/, '')];
    for (const i of this.shown) lines.push(`  ${i.action === 'new' ? `${this.verb}, new` : i.action === 'changed' ? `${this.verb}, changed` : `${i.action}, not touched`}: ${visible(i.key)}${i.size !== undefined ? ` (${formatBytes(i.size)})` : ''}`);
    if (this.count > this.shown.length) lines.push(`  … and ${this.count - this.shown.length} more (--json lists every one)`);
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}
