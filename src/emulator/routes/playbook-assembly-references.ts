// Template columns (per reference) and category conditions (per condition of a reference) of an
// assembly. Only references and conditions that the assembly's rich-text tree declares exist.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CoreContext, CoreRoutePlugin } from '../core-context.js';
import { rejectDeepBodies } from '../http/body-depth.js';
import {
  categoryCondition,
  type CategoryConditionInput,
  categoryConditionInputSchema,
  templateColumn,
  type TemplateColumnInput,
  templateColumnInputSchema,
} from '../service/playbook-inputs.js';
import { declarations, withRichText } from '../service/rich-text.js';
import type { AssemblyReferenceItemStore, CategoryConditionRecord, TemplateColumnRecord } from '../state/assembly-reference-items.js';
import { notFound, visibleAssembly } from './playbook-access.js';
import { objectSchema, PAGE_DEFAULTS, uuid } from './schemas.js';

type AnchorParams = {
  playbookIdentifier: string;
  assemblyObjectIdentifier: string;
  referenceObjectIdentifier: string;
  conditionObjectIdentifier?: string;
};

const REFERENCE = '/playbooks/:playbookIdentifier/assemblies/:assemblyObjectIdentifier/references/:referenceObjectIdentifier';

/** One kind of item: where it lives, what its anchor (reference or condition uuid) is, how it reads and is written. */
interface ItemKind<T extends { objectIdentifier: string }, Input extends object> {
  path: string;
  label: string;
  anchorParams: string[];
  store: AssemblyReferenceItemStore<T>;
  bodySchema: object;
  /** The declared anchor uuid named by the path, or a 404. */
  anchor(req: FastifyRequest<{ Params: AnchorParams }>): { assemblyIdentifier: string; anchorIdentifier: string };
  fromInput(objectIdentifier: string, input: Input): T;
  render(item: T, anchorIdentifier: string): object;
}

export const assemblyReferenceRoutes: CoreRoutePlugin = (app, ctx) => {
  const stores = ctx.stores.playbook;

  /** The assembly and the references/conditions its current tree declares. */
  const declared = (req: FastifyRequest<{ Params: AnchorParams }>) => {
    const { playbookIdentifier, assemblyObjectIdentifier, referenceObjectIdentifier } = req.params;
    const assembly = visibleAssembly(ctx, stores, req, playbookIdentifier, assemblyObjectIdentifier);
    const conditions = declarations(assembly.richText).get(referenceObjectIdentifier);
    if (!conditions) throw notFound(`Reference (not declared by the rich text of assembly ${assembly.objectIdentifier})`, referenceObjectIdentifier);
    return { assemblyIdentifier: assembly.objectIdentifier, conditions };
  };

  registerItems<TemplateColumnRecord, TemplateColumnInput>(app, ctx, {
    path: `${REFERENCE}/template-columns`,
    label: 'Template column',
    anchorParams: ['playbookIdentifier', 'assemblyObjectIdentifier', 'referenceObjectIdentifier'],
    store: stores.templateColumns,
    bodySchema: withRichText(templateColumnInputSchema),
    anchor: (req) => ({ assemblyIdentifier: declared(req).assemblyIdentifier, anchorIdentifier: req.params.referenceObjectIdentifier }),
    fromInput: templateColumn,
    render: (column, reference) => ({ ...column, assemblyReferenceObjectIdentifier: reference }),
  });

  registerItems<CategoryConditionRecord, CategoryConditionInput>(app, ctx, {
    path: `${REFERENCE}/conditions/:conditionObjectIdentifier/category-conditions`,
    label: 'Category condition',
    anchorParams: ['playbookIdentifier', 'assemblyObjectIdentifier', 'referenceObjectIdentifier', 'conditionObjectIdentifier'],
    store: stores.categoryConditions,
    bodySchema: categoryConditionInputSchema,
    anchor: (req) => {
      const { assemblyIdentifier, conditions } = declared(req);
      const condition = req.params.conditionObjectIdentifier as string;
      if (!conditions.has(condition)) throw notFound(`Condition (not declared inside reference ${req.params.referenceObjectIdentifier})`, condition);
      // Category conditions belong to the condition: every reference declaring it shows the same ones.
      return { assemblyIdentifier, anchorIdentifier: condition };
    },
    fromInput: categoryCondition,
    render: (item, condition) => ({ ...item, assemblyReferenceConditionObjectIdentifier: condition }),
  });
};

/** List (page/pageSize, defaults 1 and 20), create (201), get, update and delete (204) of one item kind. */
function registerItems<T extends { objectIdentifier: string }, Input extends object>(app: FastifyInstance, ctx: CoreContext, kind: ItemKind<T, Input>): void {
  const uuids = (names: string[]) => objectSchema(Object.fromEntries(names.map((name) => [name, uuid])), names);
  const listParams = uuids(kind.anchorParams);
  const itemParams = uuids([...kind.anchorParams, 'objectIdentifier']);
  type ItemRequest = FastifyRequest<{ Params: AnchorParams & { objectIdentifier: string } }>;

  const itemOf = (req: ItemRequest) => {
    const anchor = kind.anchor(req);
    const item = kind.store.find(anchor.assemblyIdentifier, anchor.anchorIdentifier, req.params.objectIdentifier);
    if (!item) throw notFound(kind.label, req.params.objectIdentifier);
    return { anchor, item };
  };

  app.get<{ Params: AnchorParams; Querystring: { page: number; pageSize: number } }>(
    kind.path,
    {
      schema: {
        params: listParams,
        querystring: objectSchema({
          page: { type: 'integer', minimum: 1, default: 1 },
          pageSize: { type: 'integer', minimum: 1, maximum: PAGE_DEFAULTS.maxPageSize, default: 20 },
        }),
      },
    },
    async (req) => {
      const anchor = kind.anchor(req);
      const { page, pageSize } = req.query;
      const result = kind.store.page(anchor.assemblyIdentifier, anchor.anchorIdentifier, pageSize, (page - 1) * pageSize);
      return { items: result.items.map((item) => kind.render(item, anchor.anchorIdentifier)), totalCount: result.totalCount };
    },
  );

  app.post<{ Params: AnchorParams; Body: Input }>(kind.path, { preValidation: rejectDeepBodies, schema: { params: listParams, body: kind.bodySchema } }, async (req, reply) => {
    ctx.requireWrite(req);
    const anchor = kind.anchor(req);
    const item = kind.fromInput(ctx.newId(), req.body as Input);
    kind.store.add(anchor.assemblyIdentifier, anchor.anchorIdentifier, item);
    return reply.code(201).send(kind.render(item, anchor.anchorIdentifier));
  });

  app.get<{ Params: AnchorParams & { objectIdentifier: string } }>(`${kind.path}/:objectIdentifier`, { schema: { params: itemParams } }, async (req) => {
    const { anchor, item } = itemOf(req);
    return kind.render(item, anchor.anchorIdentifier);
  });

  app.put<{ Params: AnchorParams & { objectIdentifier: string }; Body: Input }>(
    `${kind.path}/:objectIdentifier`,
    { preValidation: rejectDeepBodies, schema: { params: itemParams, body: kind.bodySchema } },
    async (req) => {
      ctx.requireWrite(req);
      const { anchor, item } = itemOf(req);
      const updated = kind.fromInput(item.objectIdentifier, req.body as Input);
      kind.store.update(anchor.assemblyIdentifier, anchor.anchorIdentifier, updated);
      return kind.render(updated, anchor.anchorIdentifier);
    },
  );

  app.delete<{ Params: AnchorParams & { objectIdentifier: string } }>(`${kind.path}/:objectIdentifier`, { schema: { params: itemParams } }, async (req, reply) => {
    ctx.requireWrite(req);
    const { anchor, item } = itemOf(req);
    kind.store.remove(anchor.assemblyIdentifier, anchor.anchorIdentifier, item.objectIdentifier);
    return reply.code(204).send();
  });
}
