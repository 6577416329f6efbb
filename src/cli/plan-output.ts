// What a dry run prints: the plan's counts and the names of what the run would do. Text lists the
// first SHOWN names and says how many more; --json writes every one into the `items` of one JSON
// object (one line) as the plan meets them, so a plan of a million files is never held in memory.
import type { PlannedItem, TransferPlan } from '../sync/engine.js';
import type { AttributeChange } from '../sync/attribute-changes.js';
import { formatBytes, safeText, visible } from '../text.js';
import type { JsonItems } from './json-items.js';
import { camelKey } from './envelope.js';
import type { Reply } from './reply.js';

const SHOWN = 20;
/** The longest value a changed key shows in text (the whole of it is under --json). */
const VALUE_SHOWN = 40;

/** `Kunde "Müller" -> "Müller GmbH"`: values escaped and shortened, `absent` for none. */
function changeText(c: AttributeChange): string {
  const value = (v: string | null) => {
    if (v === null) return 'absent';
    const chars = [...v];
    return `"${visible(chars.length > VALUE_SHOWN ? `${chars.slice(0, VALUE_SHOWN - 1).join('')}…` : v)}"`;
  };
  return `${visible(c.key)} ${value(c.was)} -> ${value(c.now)}`;
}

export class PlanOutput {
  private readonly shown: { action: string; key: string; size?: number; why?: string; changes?: AttributeChange[] }[] = [];
  private count = 0;
  private readonly items: JsonItems | undefined;

  constructor(
    private readonly reply: Reply,
    /** What writing means here: upload, download. */
    private readonly verb: string,
    /** What an item gone from the source is called here. */
    private readonly gone = 'deleted locally',
  ) {
    this.items = reply.listing({ dryRun: true });
  }

  readonly item = (planned: PlannedItem): void => {
    const item = planned.action === 'deleted locally' ? { ...planned, action: this.gone } : planned;
    this.count++;
    if (this.items) this.items.item(item);
    else if (this.shown.length < SHOWN) this.shown.push(item);
  };

  /**
   * The end: under --json, `fields` close the object (status `planned`, or `blocked` when the run
   * could not go ahead); in text, `head` and then the names.
   */
  finish(exitCode: number, fields: Record<string, unknown>, head: string, blocked = false): void {
    if (this.items) {
      this.items.end(blocked ? 'blocked' : 'planned', exitCode, { itemCount: this.count, ...fields });
      return;
    }
    const lines = [head.replace(/\n$/, '')];
    for (const i of this.shown) lines.push(`  ${i.action === 'new' ? `${this.verb}, new` : i.action === 'changed' ? `${this.verb}, changed${i.why ? ` (${i.why})` : ''}` : `${i.action}, not touched`}: ${visible(i.key)}${i.size !== undefined ? ` (${formatBytes(i.size)})` : ''}${i.changes?.length ? `: ${i.changes.map(changeText).join('; ')}` : ''}`);
    if (this.count > this.shown.length) lines.push(`  … and ${this.count - this.shown.length} more (--json lists every one)`);
    this.reply.text(lines.join('\n'));
  }

  /**
   * A transfer plan's text head, the one wording of every dry run of a transfer: where it would
   * write, its counts, what it would move, what the plan says besides (`said`), then what it would
   * not carry (`problem` names one: "problem", "not pulled"), the first `shown`, and how many more.
   */
  transferHead(plan: TransferPlan, o: { target: string; into?: string; moved?: string; said?: string[]; problem: { one: string; many: string }; shown?: number }): string {
    const problems = plan.problems.slice(0, o.shown ?? plan.problems.length);
    return (
      `plan (nothing was changed):\n  ${o.target}\n${o.into ? `  into: ${o.into}\n` : ''}` +
      `  new ${plan.new}  changed ${plan.changed}  unchanged ${plan.unchanged}  ${this.gone} ${plan.deletedLocally}\n` +
      `  ${o.moved ? `${o.moved}  ` : ''}bytes to ${this.verb} ${formatBytes(plan.bytes)}\n` +
      (o.said ?? []).map((line) => `  ${line}\n`).join('') +
      problems.map((p) => `  ${o.problem.one}: ${visible(p.key)}: ${safeText(p.reason)}\n`).join('') +
      (plan.problemCount > problems.length ? `  … and ${plan.problemCount - problems.length} more ${o.problem.many} (--json lists ${plan.problems.length})\n` : '')
    );
  }

  /**
   * A transfer plan as the fields of its --json answer: counts named as the text names them, what
   * the run would fail (`errors`) apart from what it would skip with a reason (`problems`).
   */
  transferFields<P extends TransferPlan>(plan: P): Record<string, unknown> {
    const { new: added, changed, unchanged, deletedLocally, problems, problemCount, ...rest } = plan;
    const goneKey = camelKey(this.gone);
    return {
      counts: { new: added, changed, unchanged, [goneKey]: deletedLocally },
      ...rest,
      errors: problems.filter((p) => p.outcome === 'failed').map((p) => ({ key: p.key, error: p.reason })),
      problems: problems.filter((p) => p.outcome === 'skipped').map((p) => ({ key: p.key, reason: p.reason })),
      ...(problemCount > problems.length ? { notListed: problemCount - problems.length } : {}),
    };
  }
}
