// What a fresh emulator holds: tenants with their clients, organization metadata,
// the model catalogue and a project with an assistant per tenant. A seed file
// (JSON of the same shape) replaces the default seed entirely.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { METADATA_DATA_TYPES } from '../state/organization-metadata.js';
import type { Stores } from '../state/index.js';

export const REGIONS = ['uk', 'us', 'eu', 'au', 'jp'] as const;

const named = { objectIdentifier: z.guid(), name: z.string().min(1) };

const modelSchema = z.object({
  ...named,
  description: z.string().nullable().default(null),
  hostedBy: z.string().nullable().default(null),
  modelType: z.number().int(),
  enabled: z.boolean().default(true),
  supportsVision: z.boolean().default(false),
  supportsAudio: z.boolean().default(false),
  supportsWebSearch: z.boolean().default(false),
  supportsRemoteCodeInterpreter: z.boolean().default(false),
  supportsTools: z.boolean().default(false),
  supportsReasoning: z.boolean().default(false),
  payoutPercentage: z.number().int(),
  maxOutputToken: z.number().int().nullable().default(null),
  contextLength: z.number().int(),
});

const metadataSchema = z.object({
  ...named,
  description: z.string().nullable().default(null),
  dataType: z.enum(METADATA_DATA_TYPES),
  isRequired: z.boolean().default(false),
  options: z.array(z.object(named)).default([]),
});

const projectSchema = z.object({
  ...named,
  description: z.string().nullable().default(null),
  assistants: z.array(z.object({ ...named, description: z.string().default('') })).default([]),
});

const tenantSchema = z.object({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'lower-case letters, digits and dashes'),
  region: z.enum(REGIONS),
  credits: z.number().default(1_000_000),
  clientId: z.string().min(1),
  clientSecret: z.string().min(8),
  readOnlyClientId: z.string().min(1),
  readOnlyClientSecret: z.string().min(8),
  organizationMetadata: z.array(metadataSchema).default([]),
  projects: z.array(projectSchema).default([]),
});

export const seedSchema = z.object({
  models: z.array(modelSchema).default([]),
  tenants: z.array(tenantSchema).min(1),
});

export type SeedData = z.input<typeof seedSchema>;
type Seed = z.output<typeof seedSchema>;

/** What `describe()` tells about one tenant. */
export interface TenantDescription {
  name: string;
  region: string;
  clientId: string;
  clientSecret: string;
  readOnlyClientId: string;
  readOnlyClientSecret: string;
  organizationMetadata: { objectIdentifier: string; name: string; dataType: string }[];
  assistants: { projectIdentifier: string; assistantIdentifier: string }[];
}

/** A stable uuid (v4 layout) from a name, so the default seed has the same ids every run. */
export function seedUuid(name: string): string {
  const hex = createHash('sha256').update(name).digest('hex');
  const variant = ((parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export function parseSeed(json: unknown, source = 'seed'): Seed {
  const result = seedSchema.safeParse(json);
  if (!result.success) throw new Error(`Invalid ${source}:\n${z.prettifyError(result.error)}`);
  return result.data;
}

export function loadSeedFile(path: string): SeedData {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`Cannot read seed file ${path}: ${(error as Error).message}`);
  }
  return parseSeed(json, `seed file ${path}`);
}

function defaultTenant(name: string, region: (typeof REGIONS)[number], title: string): SeedData['tenants'][number] {
  const id = (what: string) => seedUuid(`${name}/${what}`);
  const options = (definition: string, names: string[]) =>
    names.map((option) => ({ objectIdentifier: id(`metadata/${definition}/${option}`), name: option }));
  return {
    name,
    region,
    credits: 1_000_000,
    clientId: `${name}-sync`,
    clientSecret: `${name}-sync-secret`,
    readOnlyClientId: `${name}-reader`,
    readOnlyClientSecret: `${name}-reader-secret`,
    organizationMetadata: [
      { objectIdentifier: id('metadata/department'), name: 'Department', dataType: 'text' },
      { objectIdentifier: id('metadata/confidential'), name: 'Confidential', dataType: 'yesNo', isRequired: true },
      { objectIdentifier: id('metadata/contract-value'), name: 'Contract value', dataType: 'decimal' },
      { objectIdentifier: id('metadata/effective-date'), name: 'Effective date', dataType: 'date' },
      {
        objectIdentifier: id('metadata/region'),
        name: 'Region',
        dataType: 'singleCategory',
        options: options('region', ['Europe', 'Americas', 'Asia Pacific']),
      },
      {
        objectIdentifier: id('metadata/practice-areas'),
        name: 'Practice areas',
        dataType: 'multiCategory',
        options: options('practice-areas', ['Corporate', 'Litigation', 'Tax', 'Employment']),
      },
    ],
    projects: [
      {
        objectIdentifier: id('project/onboarding'),
        name: `${title} onboarding`,
        description: `Seeded project of ${title}`,
        assistants: [{ objectIdentifier: id('assistant/research'), name: `${title} research assistant`, description: 'Seeded assistant' }],
      },
    ],
  };
}

export function defaultSeed(): SeedData {
  const model = (name: string) => seedUuid(`models/${name}`);
  return {
    models: [
      {
        objectIdentifier: model('ferry-large'),
        name: 'Ferry Large',
        description: 'General purpose chat model',
        hostedBy: 'Ferry Cloud',
        modelType: 1,
        supportsVision: true,
        supportsTools: true,
        supportsReasoning: true,
        payoutPercentage: 100,
        maxOutputToken: 16384,
        contextLength: 128000,
      },
      {
        objectIdentifier: model('ferry-mini'),
        name: 'Ferry Mini',
        description: 'Small fast chat model',
        hostedBy: 'Ferry Cloud',
        modelType: 1,
        supportsTools: true,
        payoutPercentage: 40,
        maxOutputToken: 4096,
        contextLength: 64000,
      },
      {
        objectIdentifier: model('ferry-vision'),
        name: 'Ferry Vision',
        description: 'Reads images and audio',
        hostedBy: 'Partner Labs',
        modelType: 2,
        supportsVision: true,
        supportsAudio: true,
        payoutPercentage: 60,
        contextLength: 32000,
      },
      {
        objectIdentifier: model('ferry-researcher'),
        name: 'Ferry Researcher',
        description: 'Searches the web and runs code',
        hostedBy: 'Ferry Cloud',
        modelType: 3,
        supportsWebSearch: true,
        supportsRemoteCodeInterpreter: true,
        supportsReasoning: true,
        payoutPercentage: 120,
        maxOutputToken: 32768,
        contextLength: 200000,
      },
      {
        objectIdentifier: model('ferry-embed'),
        name: 'Ferry Embed',
        description: 'Text embeddings',
        hostedBy: 'Ferry Cloud',
        modelType: 4,
        payoutPercentage: 10,
        contextLength: 8192,
      },
      {
        objectIdentifier: model('ferry-legacy'),
        name: 'Ferry Legacy',
        description: 'Retired chat model',
        hostedBy: 'Ferry Cloud',
        modelType: 1,
        enabled: false,
        payoutPercentage: 80,
        maxOutputToken: 2048,
        contextLength: 16000,
      },
    ],
    tenants: [defaultTenant('contoso', 'uk', 'Contoso'), defaultTenant('fabrikam', 'us', 'Fabrikam')],
  };
}

/** Writes the seed into empty stores; returns what `describe()` tells about the tenants. */
export function applySeed(stores: Stores, data: SeedData, nowIso: string): TenantDescription[] {
  const seed = parseSeed(data);
  for (const { modelType, enabled, ...model } of seed.models) stores.models.add({ model, modelType, enabled });
  return seed.tenants.map((tenant) => {
    stores.tenants.addTenant(tenant.name, tenant.region, tenant.credits);
    // Every client acts as its own user (resource owner, notification recipient).
    const user = (clientId: string, role: string) => ({ tenant: tenant.name, userName: `${tenant.name} ${role}`, userEmail: `${clientId}@${tenant.name}.ferry.local` });
    const syncUser = user(tenant.clientId, 'sync client');
    stores.tenants.addClient({ clientId: tenant.clientId, clientSecret: tenant.clientSecret, canWrite: true, ...syncUser });
    stores.tenants.addClient({
      clientId: tenant.readOnlyClientId,
      clientSecret: tenant.readOnlyClientSecret,
      canWrite: false,
      ...user(tenant.readOnlyClientId, 'read-only client'),
    });
    for (const definition of tenant.organizationMetadata) stores.organizationMetadata.addDefinition(tenant.name, definition);
    const owner = { id: tenant.clientId, name: syncUser.userName, email: syncUser.userEmail };
    const assistants: TenantDescription['assistants'] = [];
    for (const project of tenant.projects) {
      stores.projects.create({ ...project, tenant: tenant.name, dateAdded: nowIso, isPersonal: false, owner, metadataValues: [] });
      for (const assistant of project.assistants) {
        stores.assistants.addAssistant({
          ...assistant,
          tenant: tenant.name,
          projectIdentifier: project.objectIdentifier,
          dateAdded: nowIso,
          owner,
          linkedFrom: null,
          documentIdentifiers: [],
          lastContextModelIdentifier: null,
        });
        assistants.push({ projectIdentifier: project.objectIdentifier, assistantIdentifier: assistant.objectIdentifier });
      }
    }
    return {
      name: tenant.name,
      region: tenant.region,
      clientId: tenant.clientId,
      clientSecret: tenant.clientSecret,
      readOnlyClientId: tenant.readOnlyClientId,
      readOnlyClientSecret: tenant.readOnlyClientSecret,
      organizationMetadata: tenant.organizationMetadata.map(({ objectIdentifier, name, dataType }) => ({ objectIdentifier, name, dataType })),
      assistants,
    };
  });
}
