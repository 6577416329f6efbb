// `ferry metadata ls`: the definitions seen through the interface, found the way a migration finds
// them by name (src/mapping/metadata.ts), so what it lists is what a migration can match.
import type { Command } from 'commander';
import { seenDefinitions } from '../../mapping/metadata.js';
import { visible } from '../../text.js';
import { describeTarget } from '../../api/target.js';
import { unlessNotFound } from '../../api/errors.js';
import { createContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { Reply } from '../reply.js';
import { layout } from '../../runner/layout.js';
import { plural } from '../output.js';

/** What the interface cannot show, said under every listing (text and JSON alike). */
const UNSEEN = "a definition that no project or playbook carries a value of is not shown through the interface: its id is on the service's admin pages";

export async function metadataLsAction(opts: { json?: boolean }, cmd: Command): Promise<void> {
  const { client } = createContext(cmd);
  try {
    const seen = [...(await seenDefinitions(client)).values()].sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '') || a.id.localeCompare(b.id));
    const reply = Reply.to(opts);
    const items = reply.listing({ target: client.target });
    const lines: string[] = [];
    for (const d of seen) {
      // Options, for the definitions that have them (categories): what an option map names.
      const options = await unlessNotFound(client.organizationMetadataOptions.list(d.id).all());
      const item = { ...d, options: (options ?? []).map((o) => ({ id: o.objectIdentifier, name: o.name ?? null })) };
      if (items) items.item(item);
      else {
        lines.push(`${d.id}  ${(d.dataType ?? '?').padEnd(14)}  ${visible(d.name ?? '(no name)')}  (on ${plural(d.projects, 'project', 'projects')}, ${plural(d.playbooks, 'playbook', 'playbooks')})`);
        for (const o of item.options) lines.push(`    option ${o.id}  ${visible(o.name ?? '(no name)')}`);
      }
    }
    if (items) {
      items.end('succeeded', EXIT.ok, { count: seen.length, unseen: UNSEEN });
      return;
    }
    lines.push(`${plural(seen.length, 'definition', 'definitions')} seen at ${describeTarget(client.target)}; ${UNSEEN}`);
    reply.text(layout(lines.join('\n')));
  } finally {
    await client.close();
  }
}
