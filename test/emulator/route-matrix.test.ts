// Authentication and authorization over EVERY operation of the contract, read from
// src/contract/openapi.yaml so that no operation can be left out:
//   (a) no token -> 401
//   (b) the other tenant's token on this tenant's resources -> 403 or 404, and nothing of this tenant in the body
//   (c) the read-only client on every write (POST/PUT/PATCH/DELETE) -> 403
//   (d) a malformed id in a uuid path parameter -> 400
import { randomUUID } from 'node:crypto';
import { READ_ONLY_POSTS } from '../../src/emulator/http/guards.js';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { contractPath } from '../../src/emulator/http/validate.js';
import { Client, clientFor, expectNoContractViolations, projectOf, startTestEmulator } from './helpers.js';
import { sendForm } from './playbook-helpers.js';

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: { format?: string };
}

interface Operation {
  operationId: string;
  method: string;
  path: string;
  host: string;
  pathParameters: Parameter[];
  requiredQuery: string[];
  jsonBody: boolean;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** The token endpoint is where tokens come from; it takes none. */
const UNAUTHENTICATED = new Set(['requestToken']);

function contractOperations(): Operation[] {
  const contract = parse(readFileSync(contractPath(), 'utf8'));
  const resolve = (parameter: Parameter | { $ref: string }): Parameter =>
    '$ref' in parameter ? contract.components.parameters[parameter.$ref.split('/').pop() as string] : parameter;
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(contract.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const operation = item[method];
      if (!operation || UNAUTHENTICATED.has(operation.operationId)) continue;
      const parameters = ((operation.parameters ?? []) as (Parameter | { $ref: string })[]).map(resolve);
      operations.push({
        operationId: operation.operationId,
        method: method.toUpperCase(),
        path,
        host: operation['x-ferry-host'],
        pathParameters: parameters.filter((p) => p.in === 'path'),
        requiredQuery: parameters.filter((p) => p.in === 'query' && p.required).map((p) => p.name),
        jsonBody: Object.keys(operation.requestBody?.content ?? {}).some((type) => type.includes('json')),
      });
    }
  }
  return operations;
}

const operations = contractOperations();

/** A valid body for every operation that takes JSON, so that (b) reaches the resource lookup. */
const JSON_BODIES: Record<string, (ids: Ids) => unknown> = {
  recordFailedDocument: () => ({ fileName: 'a.txt', contentType: 'text/plain' }),
  createProject: () => ({ name: 'Matrix', description: null }),
  updateProject: () => ({ name: 'Matrix', description: null }),
  createOrganizationMetadataOption: () => ({ name: 'Option' }),
  updateOrganizationMetadataOption: () => ({ name: 'Option' }),
  createPlaybook: () => ({ name: 'Matrix', isPrivate: false, organizationWide: false }),
  searchPlaybooks: () => ({}),
  searchAllPlaybooks: () => ({}),
  createPlaybookMetadata: () => ({}),
  updatePlaybookMetadata: () => ({}),
  addPlaybookMetadataCategory: (ids) => ({ optionIdentifier: ids.optionIdentifier }),
  createReferenceMaterial: () => ({ name: 'Material', type: 'text' }),
  updateReferenceMaterial: () => ({ name: 'Material' }),
  updateAssemblyRichText: () => ({ type: 'doc' }),
  createTemplateColumn: () => ({ name: 'Column' }),
  updateTemplateColumn: () => ({ name: 'Column' }),
  createCategoryCondition: () => ({ text: null }),
  updateCategoryCondition: () => ({ text: null }),
  createDocumentUpload: () => ({ name: 'Batch' }),
  sendMessage: (ids) => ({ text: 'Hello', modelIdentifier: ids.model }),
  handoffMessages: () => ({}),
  createEmbeddings: () => ({ input: 'hello' }),
  updateNotification: () => ({ isRead: true }),
  createFolder: () => ({ name: `Folder ${randomUUID()}` }),
};

/** Values for the query parameters the contract requires. */
const REQUIRED_QUERY: Record<string, () => string> = {
  documentUploadIdentifier: () => randomUUID(),
};

/** Which resource `{objectIdentifier}` names, by the path segment before it. */
const OBJECT_BY_SEGMENT: Record<string, keyof Ids> = {
  options: 'option',
  metadata: 'metadataValue',
  'reference-materials': 'referenceMaterial',
  assemblies: 'assembly',
  'template-columns': 'templateColumn',
  'category-conditions': 'categoryCondition',
  'document-uploads': 'documentUpload',
  models: 'model',
  messages: 'message',
  notifications: 'notification',
};

interface Ids {
  projectIdentifier: string;
  assistantIdentifier: string;
  documentIdentifier: string;
  playbookIdentifier: string;
  organizationMetadataIdentifier: string;
  optionIdentifier: string;
  assemblyObjectIdentifier: string;
  referenceObjectIdentifier: string;
  conditionObjectIdentifier: string;
  option: string;
  metadataValue: string;
  referenceMaterial: string;
  assembly: string;
  templateColumn: string;
  categoryCondition: string;
  documentUpload: string;
  model: string;
  message: string;
  notification: string;
}

/** The model catalogue is shared by all tenants: a model id is nobody's data. */
const SHARED: ReadonlySet<keyof Ids> = new Set(['model']);
const MARKER = `matrix-${randomUUID()}`;

let handle: EmulatorHandle;
let owner: Client;
let ids: Ids;

function resourceOf(operation: Operation, parameter: string): keyof Ids {
  if (parameter !== 'objectIdentifier') return parameter as keyof Ids;
  const segments = operation.path.split('/');
  const resource = OBJECT_BY_SEGMENT[segments[segments.indexOf('{objectIdentifier}') - 1] as string];
  if (!resource) throw new Error(`No resource known for {objectIdentifier} in ${operation.path}`);
  return resource;
}

function filledPath(operation: Operation, replace: Record<string, string> = {}): string {
  return operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(replace[name] ?? ids[resourceOf(operation, name)]));
}

function call(operation: Operation, client: Client, path = filledPath(operation)) {
  const base = operation.host === 'settings' ? handle.settingsUrl : handle.baseUrl;
  const target = new Client(base, client.bearer);
  const query = Object.fromEntries(operation.requiredQuery.map((name) => [name, REQUIRED_QUERY[name]!()]));
  const body = JSON_BODIES[operation.operationId];
  return target.call(operation.method, path, { query, ...(body ? { json: body(ids) } : {}) });
}

beforeAll(async () => {
  handle = await startTestEmulator();
  owner = await clientFor(handle);
  const tenant = handle.tenants[0]!;
  const project = projectOf(handle);
  const definition = tenant.organizationMetadata.find((d) => d.dataType === 'multiCategory')!.objectIdentifier;
  const option = (await owner.get(`/projects/organization-metadata/${definition}/options`)).body[0].objectIdentifier;
  const documentUpload = randomUUID();
  const document = (await owner.upload(project, `${MARKER}.txt`, 'matrix', { uploadIdentifier: documentUpload })).body.objectIdentifier;
  const playbook = (await owner.post('/playbooks', { name: MARKER, isPrivate: false, organizationWide: true })).body.objectIdentifier;
  const pb = `/playbooks/${playbook}`;
  const metadataValue = (await owner.post(`${pb}/metadata`, { organizationMetadataIdentifier: definition, categories: [option] })).body.objectIdentifier;
  const referenceMaterial = (await owner.post(`${pb}/reference-materials`, { name: MARKER, type: 'text' })).body.objectIdentifier;
  const assembly = (
    await sendForm(owner, 'POST', `${pb}/assemblies`, [
      { name: 'Name', value: MARKER },
      { name: 'Description', value: MARKER },
      { name: 'Type', value: 'docxFlowWide' },
      { name: 'File', file: MARKER, fileName: 'matrix.docx' },
    ])
  ).body.objectIdentifier;
  const reference = randomUUID();
  const condition = randomUUID();
  await owner.put(`${pb}/assemblies/${assembly}/rich-text`, {
    type: 'doc',
    content: [{ type: 'reference', attrs: { uuid: reference }, content: [{ type: 'condition', attrs: { uuid: condition } }] }],
  });
  const referencePath = `${pb}/assemblies/${assembly}/references/${reference}`;
  const templateColumn = (await owner.post(`${referencePath}/template-columns`, { name: MARKER })).body.objectIdentifier;
  const categoryCondition = (await owner.post(`${referencePath}/conditions/${condition}/category-conditions`, { text: MARKER })).body.objectIdentifier;
  const upload = (await owner.post(`${pb}/document-uploads`, { name: MARKER })).body.objectIdentifier;
  const model = (await new Client(handle.settingsUrl, owner.bearer).get('/models')).body[0].objectIdentifier;
  const assistant = tenant.assistants[0]!.assistantIdentifier;
  const message = (await owner.post(`/projects/${project}/assistants/${assistant}/messages`, { text: MARKER, modelIdentifier: model })).body.objectIdentifier;
  handle.notify(tenant.name, { title: MARKER, message: MARKER, type: 'matrix' });
  const notification = (await owner.get('/notifications')).body.find((n: any) => n.title === MARKER).objectIdentifier;
  ids = {
    projectIdentifier: project,
    assistantIdentifier: assistant,
    documentIdentifier: document,
    playbookIdentifier: playbook,
    organizationMetadataIdentifier: definition,
    optionIdentifier: option,
    assemblyObjectIdentifier: assembly,
    referenceObjectIdentifier: reference,
    conditionObjectIdentifier: condition,
    option,
    metadataValue,
    referenceMaterial,
    assembly,
    templateColumn,
    categoryCondition,
    documentUpload: upload,
    model,
    message,
    notification,
  };
  for (const [name, value] of Object.entries(ids)) expect(value, name).toMatch(/^[0-9a-f-]{36}$/);
  expectNoContractViolations(handle);
});
afterAll(() => handle.close());
afterEach(() => expectNoContractViolations(handle));

describe('the table', () => {
  it('covers every operation of the contract, with a body for each JSON operation and a value for each required query parameter', () => {
    expect(operations.length).toBeGreaterThanOrEqual(70);
    for (const operation of operations) {
      if (operation.jsonBody) expect(JSON_BODIES[operation.operationId], operation.operationId).toBeDefined();
      for (const name of operation.requiredQuery) expect(REQUIRED_QUERY[name], `${operation.operationId} ?${name}`).toBeDefined();
      for (const parameter of operation.pathParameters) expect(() => resourceOf(operation, parameter.name)).not.toThrow();
    }
  });
});

describe.each(operations.map((operation) => [`${operation.method} ${operation.path} (${operation.operationId})`, operation] as const))('%s', (_, operation) => {
  it('(a) answers 401 without a token', async () => {
    const res = await call(operation, new Client(handle.baseUrl, undefined));
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ status: 401 });
  });

  const tenantResources = operation.pathParameters.filter((p) => !SHARED.has(resourceOf(operation, p.name)));
  if (tenantResources.length > 0) {
    it('(b) answers 403 or 404 to the other tenant, with nothing of this tenant in the body', async () => {
      const res = await call(operation, await clientFor(handle, 1));
      expect([403, 404]).toContain(res.status);
      expectNothingOfTenant0(res.text, filledPath(operation));
    });
  } else {
    it('(b) shows the other tenant nothing of this tenant', async () => {
      const res = await call(operation, await clientFor(handle, 1));
      expect(res.status).toBeLessThan(500);
      expectNothingOfTenant0(res.text, filledPath(operation));
    });
  }

  if (WRITE_METHODS.has(operation.method) && !READ_ONLY_POSTS.has(operation.path)) {
    it('(c) answers 403 to the read-only client', async () => {
      const res = await call(operation, await clientFor(handle, 0, true));
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ status: 403 });
    });
  } else if (READ_ONLY_POSTS.has(operation.path)) {
    it('(c) lets the read-only client search', async () => {
      const res = await call(operation, await clientFor(handle, 0, true));
      expect(res.status).toBe(200);
    });
  }

  for (const parameter of operation.pathParameters.filter((p) => p.schema?.format === 'uuid')) {
    it(`(d) answers 400 to a malformed ${parameter.name}`, async () => {
      const res = await call(operation, owner, filledPath(operation, { [parameter.name]: 'not-a-uuid' }));
      expect(res.status).toBe(400);
      expect(res.body.detail).toContain(parameter.name);
    });
  }
});

/** Tenant 0's ids (other than those the caller itself sent in the path) and names must not appear. */
function expectNothingOfTenant0(text: string, requestedPath: string): void {
  expect(text).not.toContain(MARKER);
  expect(text).not.toContain('Contoso');
  for (const [name, id] of Object.entries(ids)) {
    if (SHARED.has(name as keyof Ids) || requestedPath.includes(id)) continue;
    expect(text, name).not.toContain(id);
  }
}
