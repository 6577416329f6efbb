/**
 * Contract coverage: src/contract/openapi.yaml against the vendored interface specification
 * src/contract/spec.md.
 *
 * The list of operations and of complete enumerations is PARSED from spec.md (nothing here
 * hard-codes it), so the test fails when the contract misses anything the specification names.
 */
import { describe, it, expect } from 'vitest';
import { parse } from 'yaml';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const specPath = path.join(repoRoot, 'src/contract/spec.md');
const contractPath = path.join(repoRoot, 'src/contract/openapi.yaml');
const typesPath = path.join(repoRoot, 'src/contract/openapi.d.ts');
const seedPath = path.resolve(repoRoot, '../shared/seeds/000_dd69e4d35ee51b2b.txt');

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;
const COMMON_STATUSES = ['401', '429', '500', '502', '503', '504'];

// ---------------------------------------------------------------------------------------------
// spec.md parsing
// ---------------------------------------------------------------------------------------------

type ListKind = 'array' | 'page' | null;

interface SpecOperation {
  section: string;
  method: string; // lower case
  path: string;
  success: string | undefined;
  errors: string[];
  list: ListKind;
  defaults: Record<string, string>;
  payload: string;
}

interface ParsedSpec {
  operations: SpecOperation[];
  enums: Map<string, string[]>;
  documentResponseMediaTypes: string[];
  failedUploadRequestMediaTypes: string[];
}

/** Text between a `## title` heading and the next `## ` heading. */
function chapter(md: string, title: string): string {
  const start = md.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`spec.md: chapter "## ${title}" not found`);
  const rest = md.slice(start + 1);
  const end = rest.indexOf('\n## ', 1);
  return end < 0 ? rest : rest.slice(0, end);
}

/** `### ` sections of a chapter: [title, body]. */
function sections(text: string): Array<[string, string]> {
  return text
    .split(/^### /m)
    .slice(1)
    .map((s) => {
      const nl = s.indexOf('\n');
      return [s.slice(0, nl).trim(), s.slice(nl + 1)] as [string, string];
    });
}

function backticked(s: string): string[] {
  return [...s.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
}

function parseSpec(md: string): ParsedSpec {
  const operations: SpecOperation[] = [];
  let documentResponseMediaTypes: string[] = [];
  let failedUploadRequestMediaTypes: string[] = [];

  for (const [title, body] of sections(chapter(md, 'Endpoints'))) {
    const prefix = /(?:Path prefix|Prefix) `([^`]+)`/.exec(body)?.[1];
    const sectionOps: SpecOperation[] = [];

    const resolvePath = (cell: string): string => {
      const previous = sectionOps[sectionOps.length - 1];
      let m: RegExpExecArray | null;
      if (/^same path$/.test(cell)) {
        if (!previous) throw new Error(`"same path" without a previous row in ${title}`);
        return previous.path;
      }
      if ((m = /^prefix(?:`([^`]+)`)?$/.exec(cell))) {
        if (!prefix) throw new Error(`"prefix" used in ${title}, which declares no prefix`);
        return prefix + (m[1] ?? '');
      }
      if ((m = /^`\.\.\.(\/[^`]+)`$/.exec(cell))) {
        // `.../metadata/{x}` or `.../messages/handoff`: anchor the first segment in the section's first path.
        const rest = m[1]!;
        const anchor = `/${rest.split('/')[1]}`;
        const first = sectionOps[0]?.path;
        if (!first) throw new Error(`"..." shorthand without a first row in ${title}`);
        const at = first.lastIndexOf(anchor);
        if (at < 0) throw new Error(`cannot resolve ${cell} against ${first}`);
        return first.slice(0, at) + rest;
      }
      if ((m = /^`(\/[^`]*)`$/.exec(cell))) return m[1]!;
      throw new Error(`unrecognised path cell "${cell}" in ${title}`);
    };

    const addOperation = (method: string, pathCell: string, payload: string): void => {
      const previous = sectionOps[sectionOps.length - 1];
      const sameAsPrevious = /same request and response/i.test(payload);
      let success = /\bR (\d{3})\b/.exec(payload)?.[1];
      let list: ListKind = /\bR \d{3} \[array\]/.test(payload) ? 'array' : /\{items:/.test(payload) ? 'page' : null;
      if (success === undefined && sameAsPrevious && previous) {
        success = previous.success;
        list = previous.list;
      }
      const errorList = /\bStatus(?:es)?: (\d{3}(?:, \d{3})*)/.exec(payload)?.[1];
      const defaults: Record<string, string> = {};
      for (const d of payload.matchAll(/`(\w+)`[^`;]*?\(default `?([^`)]+)`?\)/g)) defaults[d[1]!] = d[2]!;
      const op: SpecOperation = {
        section: title,
        method: method.toLowerCase(),
        path: resolvePath(pathCell.trim()),
        success,
        errors: errorList ? errorList.split(', ') : [],
        list,
        defaults,
        payload,
      };
      sectionOps.push(op);
    };

    for (const line of body.split('\n')) {
      // Table row: | METHOD path-cell | payload |
      const row = /^\|\s*(GET|POST|PUT|PATCH|DELETE)\s+(.+?)\s*\|(.*)\|\s*$/.exec(line);
      if (row) {
        addOperation(row[1]!, row[2]!, row[3]!);
        continue;
      }
      // Free-text operation line (the embeddings section): METHOD `path`. ...
      const free = /^(GET|POST|PUT|PATCH|DELETE) (`\/[^`]+`)\.?(.*)$/.exec(line);
      if (free) addOperation(free[1]!, free[2]!, free[3]!);
    }

    const served = /responses are served as ([^.]+)\./.exec(body);
    if (served) documentResponseMediaTypes = backticked(served[1]!);
    const requestTypes = /request media types of the failed-upload call are ([^.]+)\./.exec(body);
    if (requestTypes) failedUploadRequestMediaTypes = backticked(requestTypes[1]!);

    operations.push(...sectionOps);
  }

  const enums = new Map<string, string[]>();
  const enumSection = sections(chapter(md, 'Resources and their fields')).find(
    ([t]) => t === 'Enumerations (complete lists)',
  );
  if (!enumSection) throw new Error('spec.md: "### Enumerations (complete lists)" not found');
  for (const line of enumSection[1].split('\n')) {
    const m = /^\|\s*([A-Za-z]\w*)\s*\|\s*([^|]+?)\s*\|\s*$/.exec(line);
    if (!m || m[1] === 'Enum') continue;
    enums.set(m[1]!, m[2]!.split(',').map((v) => v.trim()));
  }

  return { operations, enums, documentResponseMediaTypes, failedUploadRequestMediaTypes };
}

// ---------------------------------------------------------------------------------------------
// contract helpers
// ---------------------------------------------------------------------------------------------

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

interface ContractOperation {
  method: string;
  path: string;
  op: Json;
}

function loadContract(): Json {
  return parse(readFileSync(contractPath, 'utf8'), { uniqueKeys: true });
}

function contractOperations(doc: Json): ContractOperation[] {
  const out: ContractOperation[] = [];
  for (const [p, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of HTTP_METHODS) if (item[method]) out.push({ method, path: p, op: item[method] });
  }
  return out;
}

/** Follows local `$ref`s (`#/components/...`) until a non-reference object is reached. */
function deref(doc: Json, node: Json): Json {
  let cur = node;
  for (let hops = 0; cur && typeof cur === 'object' && typeof cur.$ref === 'string'; hops++) {
    if (hops > 20) throw new Error(`$ref loop at ${cur.$ref}`);
    const ref: string = cur.$ref;
    if (!ref.startsWith('#/')) throw new Error(`non-local $ref ${ref}`);
    cur = ref
      .slice(2)
      .split('/')
      .reduce((o: Json, k) => (o == null ? undefined : o[k.replace(/~1/g, '/').replace(/~0/g, '~')]), doc);
    if (cur === undefined) throw new Error(`unresolved $ref ${ref}`);
  }
  return cur;
}

function typeIncludes(schema: Json, t: string): boolean {
  return Array.isArray(schema?.type) ? schema.type.includes(t) : schema?.type === t;
}

/** Visits every object in the document, with its JSON path. */
function walk(node: Json, visit: (obj: Json, at: string) => void, at = '#'): void {
  if (Array.isArray(node)) node.forEach((v, i) => walk(v, visit, `${at}/${i}`));
  else if (node && typeof node === 'object') {
    visit(node, at);
    for (const [k, v] of Object.entries(node)) walk(v, visit, `${at}/${k}`);
  }
}

function coerceDefault(raw: string): unknown {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (/^-?\d+$/.test(raw)) return Number(raw);
  return raw;
}

const md = readFileSync(specPath, 'utf8');
const spec = parseSpec(md);
const contract = loadContract();
const ops = contractOperations(contract);
const findOp = (method: string, p: string): ContractOperation | undefined =>
  ops.find((o) => o.method === method && o.path === p);
const label = (o: { method: string; path: string }): string => `${o.method.toUpperCase()} ${o.path}`;

// ---------------------------------------------------------------------------------------------
// tests
// ---------------------------------------------------------------------------------------------

describe('contract covers the interface specification', () => {
  it('extracts exactly 68 operations from spec.md, all distinct', () => {
    expect(spec.operations).toHaveLength(68);
    const keys = spec.operations.map(label);
    expect(new Set(keys).size).toBe(68);
  });

  it('is an OpenAPI 3.1.0 document', () => {
    expect(contract.openapi).toBe('3.1.0');
  });

  it.each(spec.operations.map((o) => [label(o), o] as const))('%s exists with its documented statuses', (_, so) => {
    const found = findOp(so.method, so.path);
    expect(found, `missing in contract: ${label(so)}`).toBeDefined();
    const op = found!.op;
    expect(op['x-ferry-extension']).toBeUndefined();
    expect(typeof op.operationId).toBe('string');

    // documented success status
    expect(so.success, `no success status parsed for ${label(so)}`).toBeDefined();
    expect(Object.keys(op.responses ?? {})).toContain(so.success);

    // documented error statuses: present, and not marked as a ferry choice
    for (const status of so.errors) {
      const response = op.responses?.[status];
      expect(response, `${label(so)} lacks documented status ${status}`).toBeDefined();
      expect(deref(contract, response)['x-ferry-choice'], `${label(so)} ${status} is documented`).toBeUndefined();
    }

    // bare arrays vs {items, totalCount}
    if (so.list) {
      const ok = deref(contract, op.responses[so.success!]);
      const schema = deref(contract, ok.content?.['application/json']?.schema);
      expect(schema, `${label(so)} has no application/json 200 schema`).toBeDefined();
      if (so.list === 'array') {
        expect(typeIncludes(schema, 'array'), `${label(so)} must be a bare array`).toBe(true);
      } else {
        expect(typeIncludes(schema, 'object'), `${label(so)} must be a page object`).toBe(true);
        expect(typeIncludes(schema.properties?.items, 'array')).toBe(true);
        expect(schema.properties?.totalCount).toMatchObject({ type: 'integer', format: 'int32' });
      }
    }

    // query-parameter defaults the spec gives
    for (const [name, raw] of Object.entries(so.defaults)) {
      const param = (op.parameters ?? []).map((p: Json) => deref(contract, p)).find((p: Json) => p.name === name);
      expect(param, `${label(so)} lacks parameter ${name}`).toBeDefined();
      expect(param.schema?.default, `${label(so)} ${name} default`).toEqual(coerceDefault(raw));
    }

    // host: the models section names {settings_url}; everything else is on the base host
    const expectedHost = /\{settings_url\}/.test(so.section) ? 'settings' : 'base';
    expect(op['x-ferry-host']).toBe(expectedHost);
  });

  it('has no operations beyond the 68 of the spec, requestToken and flagged extensions', () => {
    const specKeys = new Set(spec.operations.map(label));
    const extra = ops.filter(
      (o) => o.op['x-ferry-extension'] !== true && o.op.operationId !== 'requestToken' && !specKeys.has(label(o)),
    );
    expect(extra.map(label)).toEqual([]);
    const core = ops.filter((o) => o.op['x-ferry-extension'] !== true && o.op.operationId !== 'requestToken');
    expect(core).toHaveLength(68);
  });

  it('declares every complete enumeration with exactly the spec values, in order', () => {
    expect(spec.enums.size).toBe(10);
    for (const [name, values] of spec.enums) {
      const schema = contract.components?.schemas?.[name];
      expect(schema, `missing enum schema ${name}`).toBeDefined();
      expect(schema.type).toBe('string');
      expect(schema.enum, `enum ${name}`).toEqual(values);
    }
  });

  it('serves the document endpoints in the documented media types', () => {
    expect(spec.documentResponseMediaTypes).toEqual(['text/plain', 'application/json', 'text/json']);
    const docOps = spec.operations.filter((o) => o.section.startsWith('Documents'));
    expect(docOps).toHaveLength(3);
    for (const so of docOps) {
      const op = findOp(so.method, so.path)!.op;
      for (const status of [so.success!, ...so.errors]) {
        const content = deref(contract, op.responses[status]).content ?? {};
        expect(Object.keys(content), `${label(so)} ${status}`).toEqual(
          expect.arrayContaining(spec.documentResponseMediaTypes),
        );
      }
    }
    expect(spec.failedUploadRequestMediaTypes).toEqual(['application/json', 'text/json', 'application/*+json']);
    const failed = docOps.find((o) => o.path.endsWith('/failed'))!;
    const body = deref(contract, findOp(failed.method, failed.path)!.op.requestBody);
    expect(Object.keys(body.content)).toEqual(expect.arrayContaining(spec.failedUploadRequestMediaTypes));
  });
});

describe('contract conventions', () => {
  it('every operation has a unique operationId, a tag and an x-ferry-host', () => {
    const ids = ops.map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const o of ops) {
      expect(o.op.tags?.length, label(o)).toBeGreaterThan(0);
      expect(['base', 'settings', 'auth'], label(o)).toContain(o.op['x-ferry-host']);
    }
    expect(Object.keys(contract['x-ferry-hosts'] ?? {}).sort()).toEqual(['auth', 'base', 'settings']);
  });

  it('every operation lists 401, 429 and 5xx responses', () => {
    for (const o of ops) {
      for (const status of COMMON_STATUSES) expect(o.op.responses?.[status], `${label(o)} ${status}`).toBeDefined();
      expect(deref(contract, o.op.responses['429']).headers?.['Retry-After'], `${label(o)} 429 Retry-After`).toBeDefined();
    }
  });

  it('every x-ferry-choice is a non-empty string', () => {
    let count = 0;
    walk(contract, (obj, at) => {
      if ('x-ferry-choice' in obj) {
        count++;
        expect(typeof obj['x-ferry-choice'], at).toBe('string');
        expect(obj['x-ferry-choice'].trim().length, at).toBeGreaterThan(0);
      }
    });
    expect(count).toBeGreaterThan(0);
  });

  it('every x-ferry-known-values is an array (open enumerations)', () => {
    walk(contract, (obj, at) => {
      if ('x-ferry-known-values' in obj) {
        expect(Array.isArray(obj['x-ferry-known-values']), at).toBe(true);
        expect(obj.enum, `${at} must stay open`).toBeUndefined();
      }
    });
  });

  it('every $ref resolves', () => {
    walk(contract, (obj, at) => {
      if (typeof obj.$ref === 'string') expect(() => deref(contract, obj), at).not.toThrow();
    });
  });

  it('the token endpoint is unauthenticated, on the auth host, form-encoded', () => {
    const token = ops.find((o) => o.op.operationId === 'requestToken');
    expect(token && label(token)).toBe('POST /oauth/token');
    expect(token!.op.security).toEqual([]);
    expect(token!.op['x-ferry-host']).toBe('auth');
    expect(token!.op.servers?.[0]?.url).toBe('{auth_url}');
    expect(Object.keys(token!.op.requestBody.content)).toEqual(['application/x-www-form-urlencoded']);
    expect(contract.components.securitySchemes.bearerAuth).toMatchObject({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
    expect(contract.security).toEqual([{ bearerAuth: [] }]);
  });

  it('extensions are flagged, described and tagged', () => {
    const ext = ops.filter((o) => o.op['x-ferry-extension'] === true);
    expect(ext.map((o) => o.op.operationId).sort()).toEqual(['createFolder', 'downloadDocumentContent']);
    for (const o of ext) {
      expect(o.op.tags).toEqual(['extensions']);
      expect(String(o.op.description ?? '')).toMatch(/NOT part of the specification/);
    }
  });
});

describe('vendored specification', () => {
  it('src/contract/spec.md is a byte-for-byte copy of the seed (when the seed is present)', () => {
    if (existsSync(seedPath)) {
      expect(readFileSync(specPath).equals(readFileSync(seedPath))).toBe(true);
    }
  });
});

describe('generated types', () => {
  it('src/contract/openapi.d.ts is up to date with openapi.yaml', async () => {
    // Same output as `npx openapi-typescript src/contract/openapi.yaml -o src/contract/openapi.d.ts`.
    const generated = COMMENT_HEADER + astToString(await openapiTS(pathToFileURL(contractPath), { silent: true }));
    const committed = readFileSync(typesPath, 'utf8');
    expect(committed === generated, 'openapi.d.ts is stale: run `npm run generate`').toBe(true);
  }, 60_000);
});
