// MetadataValueInput -> stored value -> MetadataValue, checked against the tenant's
// organization metadata definitions. Shared by projects and the playbook parts.
import type { components } from '../../contract/openapi.js';
import { HttpError, type MetadataDefinition } from '../context.js';

/** The contract's write shape; the emulator shares the contract's types with the client. */
export type MetadataValueInput = components['schemas']['MetadataValueInput'];

export interface StoredMetadataValue extends MetadataValueInput {
  objectIdentifier: string;
  organizationMetadataIdentifier: string;
}

/** JSON schema of one MetadataValueInput, for route body validation. */
export const metadataValueInputSchema = {
  type: 'object',
  properties: {
    isYes: { type: ['boolean', 'null'] },
    decimalValue: { type: ['number', 'null'] },
    text: { type: ['string', 'null'] },
    date: { type: ['string', 'null'], format: 'date-time' },
    singleCategoryIdentifier: { type: ['string', 'null'], format: 'uuid' },
    categories: { type: ['array', 'null'], items: { type: 'string', format: 'uuid' } },
    organizationMetadataIdentifier: { type: ['string', 'null'], format: 'uuid' },
  },
} as const;

type DefinitionLookup = (objectIdentifier: string) => MetadataDefinition | undefined;

/** Checks the input against its definition (400 when it names none, or options outside it) and gives it an id. */
export function storeMetadataValue(input: MetadataValueInput, lookup: DefinitionLookup, objectIdentifier: string): StoredMetadataValue {
  const definitionId = input.organizationMetadataIdentifier;
  if (!definitionId) throw new HttpError(400, 'Bad Request', 'organizationMetadataIdentifier is required.');
  const definition = lookup(definitionId);
  if (!definition) throw new HttpError(400, 'Bad Request', `Organization metadata ${definitionId} does not exist.`);
  const optionIds = new Set(definition.options.map((option) => option.objectIdentifier));
  const chosen = [...(input.categories ?? []), ...(input.singleCategoryIdentifier ? [input.singleCategoryIdentifier] : [])];
  if (chosen.length > 0 && !['singleCategory', 'multiCategory'].includes(definition.dataType)) {
    throw new HttpError(400, 'Bad Request', `Organization metadata ${definition.name} (${definition.dataType}) has no categories.`);
  }
  const unknown = chosen.find((id) => !optionIds.has(id));
  if (unknown) throw new HttpError(400, 'Bad Request', `${unknown} is not an option of organization metadata ${definition.name}.`);
  return { ...input, objectIdentifier, organizationMetadataIdentifier: definitionId };
}

/** The MetadataValue read shape, with the definition as it is now (current options). */
export function renderMetadataValue(value: StoredMetadataValue, lookup: DefinitionLookup): Record<string, unknown> {
  const definition = lookup(value.organizationMetadataIdentifier);
  return {
    objectIdentifier: value.objectIdentifier,
    isYes: value.isYes ?? null,
    text: value.text ?? null,
    decimalValue: value.decimalValue ?? null,
    date: value.date ?? null,
    categories: value.categories ?? null,
    singleCategoryIdentifier: value.singleCategoryIdentifier ?? null,
    ...(definition ? { metadata: definition } : {}),
  };
}
