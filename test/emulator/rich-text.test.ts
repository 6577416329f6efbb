import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { declarations, type RichTextNode, richTextNodeSchema } from '../../src/emulator/service/rich-text.js';
import { contractPath } from '../../src/emulator/http/validate.js';

/** The contract's schema with its component $refs inlined, RichTextNode's self-reference kept as a marker. */
function inlined(schema: unknown, components: Record<string, unknown>): unknown {
  if (Array.isArray(schema)) return schema.map((item) => inlined(item, components));
  if (typeof schema !== 'object' || schema === null) return schema;
  const ref = (schema as { $ref?: string }).$ref;
  if (ref === '#/components/schemas/RichTextNode') return { $ref: 'self' };
  if (ref) return inlined(components[ref.replace('#/components/schemas/', '')], components);
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key]) => key !== 'description' && !key.startsWith('x-ferry'))
      .map(([key, value]) => [key, inlined(value, components)]),
  );
}

describe('rich text', () => {
  it('accepts exactly what the contract’s RichTextNode describes', () => {
    const components = parse(readFileSync(contractPath(), 'utf8')).components.schemas as Record<string, unknown>;
    const contract = inlined(components.RichTextNode, components);
    const ours = JSON.parse(JSON.stringify(richTextNodeSchema.definitions.richTextNode).replaceAll('"#/definitions/richTextNode"', '"self"'));
    expect(ours).toEqual(contract);
  });

  it('declares references anywhere and conditions inside the nearest enclosing reference', () => {
    const [outer, inner, c1, c2, stray] = Array.from({ length: 5 }, () => randomUUID());
    const tree: RichTextNode = {
      type: 'doc',
      content: [
        { type: 'condition', attrs: { uuid: stray } },
        {
          type: 'reference',
          attrs: { uuid: outer },
          content: [{ type: 'paragraph', content: [{ type: 'condition', attrs: { uuid: c1 } }] }, { type: 'reference', attrs: { uuid: inner }, content: [{ type: 'condition', attrs: { uuid: c2 } }] }],
        },
      ],
    };
    expect(declarations(tree)).toEqual(
      new Map([
        [outer, new Set([c1])],
        [inner, new Set([c2])],
      ]),
    );
    expect(declarations(null)).toEqual(new Map());
  });

  it('walks very deep trees', () => {
    const reference = randomUUID();
    let tree: RichTextNode = { type: 'reference', attrs: { uuid: reference } };
    for (let depth = 0; depth < 100_000; depth++) tree = { type: 'paragraph', content: [tree] };
    expect([...declarations(tree).keys()]).toEqual([reference]);
  });
});
