// Request bodies of the playbook parts that a playbook archive may carry too: their JSON
// schemas (route validation and archive validation use the same ones) and the records they make.
import type { components } from '../../contract/openapi.js';
import { HttpError, type MetadataDefinition } from '../context.js';
import { type MetadataValueInput, type StoredMetadataValue, storeMetadataValue } from './metadata-values.js';
import { EMPTY_DOCUMENT, RICH_TEXT_NODE } from './rich-text.js';
import type { CategoryConditionRecord, TemplateColumnRecord } from '../state/assembly-reference-items.js';
import type { ReferenceMaterialFields, ReferenceMaterialRecord } from '../state/reference-materials.js';

const nullable = (type: string, extra: Record<string, unknown> = {}) => ({ type: [type, 'null'], ...extra });

const referenceMaterialFieldSchemas = {
  name: { type: 'string', minLength: 1 },
  description: nullable('string'),
  booleanValue: nullable('boolean'),
  isSourceDocuments: nullable('boolean'),
  dateTimeValue: nullable('string', { format: 'date-time' }),
  decimalValue: nullable('number'),
  textValue: nullable('string'),
  isLocked: { type: 'boolean' },
  isRequired: { type: 'boolean' },
};

type Schemas = components['schemas'];
export type ReferenceMaterialUpdate = Schemas['ReferenceMaterialUpdateInput'];
/** Category names are required here (the read model's names are non-null): a documented choice. */
export type ReferenceMaterialInput = Omit<Schemas['ReferenceMaterialInput'], 'categories'> & { categories?: { name: string }[] };

export const referenceMaterialUpdateSchema = { type: 'object', properties: referenceMaterialFieldSchemas, required: ['name'] };

export const referenceMaterialInputSchema = {
  type: 'object',
  properties: {
    ...referenceMaterialFieldSchemas,
    type: { type: 'string', minLength: 1 },
    categories: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
  },
  required: ['name', 'type'],
};

export type TemplateColumnInput = Schemas['TemplateColumnInput'];

/** Embeds RICH_TEXT_NODE: wrap the root schema that uses it in withRichText. */
export const templateColumnInputSchema = {
  type: 'object',
  properties: { name: { type: 'string' }, template: RICH_TEXT_NODE },
  required: ['name'],
};

export type CategoryConditionInput = Schemas['CategoryConditionInput'];

export const categoryConditionInputSchema = {
  type: 'object',
  properties: { fuzzyMatch: { type: 'boolean' }, text: nullable('string') },
  required: ['text'],
};

/** The update body as stored: absent fields become null (or false), as a PUT replaces the whole resource. */
export function referenceMaterialFields(input: ReferenceMaterialUpdate): ReferenceMaterialFields {
  return {
    name: input.name,
    description: input.description ?? null,
    booleanValue: input.booleanValue ?? null,
    isSourceDocuments: input.isSourceDocuments ?? null,
    dateTimeValue: input.dateTimeValue ?? null,
    decimalValue: input.decimalValue ?? null,
    textValue: input.textValue ?? null,
    isLocked: input.isLocked ?? false,
    isRequired: input.isRequired ?? false,
  };
}

export function newReferenceMaterial(
  input: ReferenceMaterialInput,
  ids: { newId: () => string; now: string; stableObjectIdentifier?: string },
): ReferenceMaterialRecord {
  return {
    objectIdentifier: ids.newId(),
    stableObjectIdentifier: ids.stableObjectIdentifier ?? ids.newId(),
    type: input.type,
    dateAdded: ids.now,
    ...referenceMaterialFields(input),
    categories: (input.categories ?? []).map((category) => ({ objectIdentifier: ids.newId(), name: category.name, dateAdded: ids.now })),
  };
}

export function templateColumn(objectIdentifier: string, input: TemplateColumnInput): TemplateColumnRecord {
  return { objectIdentifier, name: input.name, template: input.template ?? EMPTY_DOCUMENT };
}

export function categoryCondition(objectIdentifier: string, input: CategoryConditionInput): CategoryConditionRecord {
  return { objectIdentifier, fuzzyMatch: input.fuzzyMatch ?? false, text: input.text };
}

/**
 * Checks new metadata values against their definitions (400 for an unknown definition or option)
 * and against each other and the playbook's `existing` values: a playbook holds one value per definition.
 */
export function playbookMetadataValues(
  inputs: MetadataValueInput[],
  lookup: (definitionId: string) => MetadataDefinition | undefined,
  newId: () => string,
  existing: StoredMetadataValue[] = [],
): StoredMetadataValue[] {
  const taken = new Set(existing.map((value) => value.organizationMetadataIdentifier));
  return inputs.map((input) => {
    const value = storeMetadataValue(input, lookup, newId());
    if (taken.has(value.organizationMetadataIdentifier)) {
      throw new HttpError(400, 'Bad Request', `The playbook already has a value for organization metadata ${value.organizationMetadataIdentifier}.`);
    }
    taken.add(value.organizationMetadataIdentifier);
    return value;
  });
}
