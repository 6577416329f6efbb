// Assembly rich-text trees: their JSON schema (the contract's RichTextNode) and the references
// and conditions a tree declares, which template columns and category conditions hang off.

export interface RichTextNode {
  type: string | null;
  text?: string;
  attrs?: { uuid?: string; [name: string]: unknown };
  marks?: unknown[];
  content?: RichTextNode[];
}

/**
 * Most JSON nesting levels a body holding trees may have (a tree node takes two: the node and its
 * `content`). Schema validation recurses per level; deeper bodies would exhaust the call stack.
 */
export const MAX_JSON_DEPTH = 512;

/** How deeply `value` nests objects and arrays (walked without recursion). */
export function nestingDepth(value: unknown): number {
  let deepest = 0;
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue;
    const depth = next.depth + 1;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(next.value)) pending.push({ value: child, depth });
  }
  return deepest;
}

/** What an assembly without a stored tree answers, and a template column without a template. */
export const EMPTY_DOCUMENT: RichTextNode = { type: 'doc', content: [] };

const attrs = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    label: { type: 'string' },
    uuid: { type: 'string', format: 'uuid' },
    type: { type: 'string' },
    promptDataType: { type: 'string' },
    properties: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          type: { type: 'string' },
          attrs: {
            type: 'object',
            properties: {
              type: { type: 'string' },
              uuid: { type: 'string', format: 'uuid' },
              id: { type: 'string' },
              label: { type: 'string' },
              renderAs: { type: 'string' },
              parentMentionId: { type: 'string', format: 'uuid' },
            },
          },
        },
      },
    },
    level: { type: 'integer' },
    href: { type: 'string' },
    textAlign: { type: 'string' },
  },
} as const;

/** Where a schema expects a RichTextNode; its root must carry `richTextDefinitions` (see withRichText). */
export const RICH_TEXT_NODE = { $ref: '#/definitions/richTextNode' } as const;

/**
 * The contract's RichTextNode as JSON schema (a test checks they stay equal), so every tree the
 * emulator accepts can be served back unchanged. Recursive through `definitions`, which JSON
 * pointers resolve from the root: a schema that embeds RICH_TEXT_NODE is wrapped in withRichText.
 */
const richTextDefinitions = {
  richTextNode: {
    type: 'object',
    required: ['type'],
    properties: {
      type: { type: ['string', 'null'] },
      text: { type: 'string' },
      attrs,
      marks: { type: 'array', items: { type: 'object', properties: { type: { type: 'string' }, attrs } } },
      content: { type: 'array', items: RICH_TEXT_NODE },
    },
  },
} as const;

export function withRichText<T extends object>(rootSchema: T): T & { definitions: typeof richTextDefinitions } {
  return { ...rootSchema, definitions: richTextDefinitions };
}

/** A request body that is one tree. */
export const richTextNodeSchema = withRichText(RICH_TEXT_NODE);

/** Reference uuid -> the condition uuids declared inside it. */
export type Declarations = Map<string, Set<string>>;

/**
 * A `reference` node (attrs.uuid R) anywhere in the tree declares reference R; a `condition`
 * node (attrs.uuid C) inside a reference node declares condition C of the nearest enclosing reference.
 */
export function declarations(tree: RichTextNode | null): Declarations {
  const declared: Declarations = new Map();
  // Iterative walk: a deep tree must not exhaust the call stack.
  const pending: { node: RichTextNode; reference: string | undefined }[] = tree ? [{ node: tree, reference: undefined }] : [];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { node } = next;
    const uuid = typeof node.attrs?.uuid === 'string' ? node.attrs.uuid : undefined;
    let reference = next.reference;
    if (node.type === 'reference' && uuid) {
      reference = uuid;
      if (!declared.has(uuid)) declared.set(uuid, new Set());
    } else if (node.type === 'condition' && uuid && reference) {
      declared.get(reference)?.add(uuid);
    }
    for (const child of node.content ?? []) pending.push({ node: child, reference });
  }
  return declared;
}

/** Every condition the tree declares, whichever reference it sits in. */
export function declaredConditions(declared: Declarations): Set<string> {
  return new Set([...declared.values()].flatMap((conditions) => [...conditions]));
}
