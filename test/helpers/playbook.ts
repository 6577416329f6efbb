// A playbook with every kind of sub-resource, built through the client against the emulator:
// metadata with categories, reference materials of several types, assemblies with content and
// rich text declaring references and conditions, template columns and category conditions.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FerryClient } from '../../src/api/client.js';
import type { RichTextNode } from '../../src/api/types.js';
import type { TenantDescription } from '../../src/emulator/index.js';

export interface BuiltPlaybook {
  id: string;
  references: string[];
  conditions: string[];
}

function definition(tenant: TenantDescription, name: string): string {
  const found = tenant.organizationMetadata.find((d) => d.name === name);
  if (!found) throw new Error(`the seed has no organization metadata ${name}`);
  return found.objectIdentifier;
}

async function option(client: FerryClient, definitionId: string, name: string): Promise<string> {
  for await (const o of client.organizationMetadataOptions.list(definitionId)) if (o.name === name) return o.objectIdentifier;
  throw new Error(`no option ${name}`);
}

/** `assemblies` assemblies (at least 2 get references and conditions); `contentBytes` per template file. */
export async function buildRichPlaybook(client: FerryClient, tenant: TenantDescription, opts: { name?: string; assemblies?: number; contentBytes?: number } = {}): Promise<BuiltPlaybook> {
  const region = definition(tenant, 'Region');
  const practice = definition(tenant, 'Practice areas');
  const playbook = await client.playbooks.create({
    name: opts.name ?? 'Supplier contracts',
    description: 'Everything a supplier contract review needs',
    isPrivate: false,
    organizationWide: true,
    metadata: [
      { organizationMetadataIdentifier: region, singleCategoryIdentifier: await option(client, region, 'Europe') },
      { organizationMetadataIdentifier: definition(tenant, 'Department'), text: 'Procurement' },
    ],
  });
  const id = playbook.objectIdentifier;
  const multi = await client.playbookMetadata.create(id, { organizationMetadataIdentifier: practice, categories: [await option(client, practice, 'Corporate')] });
  await client.playbookMetadata.addCategory(id, multi.objectIdentifier, await option(client, practice, 'Tax'));
  await client.playbookMetadata.create(id, { organizationMetadataIdentifier: definition(tenant, 'Contract value'), decimalValue: 125000.5 });

  const material = await client.referenceMaterials.create(id, { name: 'Governing law clause', type: 'boolean', booleanValue: true, isRequired: true, categories: [{ name: 'Legal' }, { name: 'Risk' }] });
  await client.referenceMaterials.create(id, { name: 'Liability cap', type: 'decimal', decimalValue: 1_000_000, description: 'in EUR' });
  await client.referenceMaterials.create(id, { name: 'Notes', type: 'text', textValue: 'Check the annex', isLocked: true });

  const references: string[] = [];
  const conditions: string[] = [];
  const count = opts.assemblies ?? 2;
  for (let i = 0; i < count; i++) {
    const size = opts.contentBytes ?? 2048 + i;
    const content = Buffer.alloc(size, 0);
    for (let b = 0; b < size; b += 4096) content.write(`template ${i} block ${b} `, b);
    const assembly = await client.assemblies.create(id, {
      name: `Template ${i + 1}`,
      description: `The ${i + 1}. template`,
      type: 'docxFlowWide',
      file: { open: () => Readable.from([content]), size, filename: `template-${i + 1}.docx` },
    });
    const ref = randomUUID();
    const cond = randomUUID();
    references.push(ref);
    conditions.push(cond);
    const tree: RichTextNode = {
      type: 'doc',
      content: [
        { type: 'paragraph', content: [{ type: 'text', text: `Clause ${i + 1} `, marks: [{ type: 'bold' }] }] },
        {
          type: 'reference',
          attrs: { uuid: ref, label: `Reference ${i + 1}`, id: material.objectIdentifier },
          content: [{ type: 'condition', attrs: { uuid: cond, label: 'When EU' } }],
        },
      ],
    };
    await client.assemblies.updateRichText(id, assembly.objectIdentifier as string, tree);
    const refPath = { playbookIdentifier: id, assemblyIdentifier: assembly.objectIdentifier as string, referenceIdentifier: ref };
    await client.templateColumns.create(refPath, { name: 'Party', template: { type: 'doc', content: [{ type: 'text', text: 'The supplier' }] } });
    await client.templateColumns.create(refPath, { name: 'Amount' });
    await client.categoryConditions.create({ ...refPath, conditionIdentifier: cond }, { fuzzyMatch: true, text: 'Europe' });
    await client.categoryConditions.create({ ...refPath, conditionIdentifier: cond }, { fuzzyMatch: false, text: null });
  }
  return { id, references, conditions };
}

export { comparable } from '../../src/playbooks/format.js';

/** How many items a list yields, read to its end. */
export async function count<T>(list: AsyncIterable<T>): Promise<number> {
  let n = 0;
  for await (const _ of list) n++;
  return n;
}
