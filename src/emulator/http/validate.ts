// Checks the emulator's own responses against the OpenAPI contract
// (src/contract/openapi.yaml): declared status, declared media type, body schema.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ajv2020Module, { type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormatsModule from 'ajv-formats';
import { parse as parseYaml } from 'yaml';

export interface ContractViolation {
  method: string;
  path: string;
  status: number;
  operation: string;
  problem: string;
}

interface MediaTypeObject {
  schema?: unknown;
}

interface ResponseObject {
  content?: Record<string, MediaTypeObject>;
}

interface Operation {
  pointer: string;
  name: string;
  responses: Record<string, ResponseObject | { $ref: string }>;
}

// Both are CommonJS modules that also export themselves as `default`; that works under every loader.
const Ajv2020 = ajv2020Module.default;
const addFormats = ajvFormatsModule.default;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const DOCUMENT_ID = 'urn:ferry:contract';

/** The contract file, found from the package root so it works from `src/` and from `dist/src/`. */
export function contractPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('Cannot find the package root (package.json) above the emulator.');
    dir = parent;
  }
  return join(dir, 'src', 'contract', 'openapi.yaml');
}

/** `/projects/{id}/documents` and `/projects/:projectIdentifier/documents` both become `/projects/{}/documents`. */
export function templateKey(path: string): string {
  return path.replace(/\{[^}]+\}/g, '{}').replace(/:[A-Za-z0-9_]+/g, '{}');
}

function pointerSegment(segment: string): string {
  return encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1'));
}

/** Compiled contracts by file, as last read (its mtime): see ContractValidator.of. */
const compiled = new Map<string, { mtimeMs: number; validator: ContractValidator }>();

export class ContractValidator {
  /**
   * The contract at `path`, compiled once per process while the file is unchanged: a validator
   * holds nothing of one emulator's (its caches are compiled schemas), and a process that starts
   * many emulators (the test suite starts hundreds) paid ~120 ms of CPU each to parse and compile
   * it again, and again for each response schema on first use.
   */
  static of(path: string): ContractValidator {
    const mtimeMs = statSync(path).mtimeMs;
    const known = compiled.get(path);
    if (known?.mtimeMs === mtimeMs) return known.validator;
    const validator = new ContractValidator(path);
    compiled.set(path, { mtimeMs, validator });
    return validator;
  }

  private readonly ajv: InstanceType<typeof Ajv2020>;
  private readonly operations = new Map<string, Operation>();
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly document: Record<string, unknown>;

  constructor(path = contractPath()) {
    const document = parseYaml(readFileSync(path, 'utf8')) as Record<string, unknown>;
    if (typeof document?.openapi !== 'string' || !document.openapi.startsWith('3.')) {
      throw new Error(`${path} is not an OpenAPI 3 document.`);
    }
    this.document = document;
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID });
    const paths = (document.paths ?? {}) as Record<string, Record<string, unknown>>;
    for (const [path, item] of Object.entries(paths)) {
      for (const method of METHODS) {
        const operation = item[method] as { operationId?: string; responses?: Operation['responses'] } | undefined;
        if (!operation) continue;
        this.operations.set(`${method.toUpperCase()} ${templateKey(path)}`, {
          pointer: `#/paths/${pointerSegment(path)}/${method}`,
          name: operation.operationId ?? `${method.toUpperCase()} ${path}`,
          responses: operation.responses ?? {},
        });
      }
    }
  }

  /**
   * `problem` is set when the response does not conform. `body` is the JSON text, `stream`
   * for a streamed body (only its media type is checked), or undefined when there is none.
   */
  check(method: string, path: string, status: number, contentType: string | undefined, body: string | 'stream' | undefined): { operation: string; problem?: string } {
    const operation = this.operations.get(`${method} ${templateKey(path)}`);
    if (!operation) return { operation: `${method} ${path}`, problem: 'The operation is not in the contract.' };
    const statusKey = [String(status), `${String(status)[0]}XX`, 'default'].find((key) => key in operation.responses);
    if (!statusKey) {
      return { operation: operation.name, problem: `Status ${status} is not declared (declared: ${Object.keys(operation.responses).join(', ')}).` };
    }
    const { response, pointer: responsePointer } = this.resolve(operation.responses[statusKey]!, `${operation.pointer}/responses/${statusKey}`);
    const declared = Object.keys(response.content ?? {});
    if (body === undefined || body === '') return { operation: operation.name };
    if (declared.length === 0) return { operation: operation.name, problem: `Status ${status} declares no body, but one was sent.` };
    const mediaType = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
    const matched = declared.find((candidate) => mediaTypeMatches(candidate.toLowerCase(), mediaType));
    if (!matched) {
      return { operation: operation.name, problem: `Content type ${mediaType || '(none)'} is not declared for ${status} (declared: ${declared.join(', ')}).` };
    }
    if (body === 'stream' || !isJson(mediaType) || !response.content?.[matched]?.schema) return { operation: operation.name };
    const validate = this.validator(`${responsePointer}/content/${pointerSegment(matched)}/schema`);
    let data: unknown;
    try {
      data = JSON.parse(body);
    } catch {
      return { operation: operation.name, problem: 'The body is not valid JSON.' };
    }
    if (validate(data)) return { operation: operation.name };
    const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`.trim());
    return { operation: operation.name, problem: `Body does not match the ${status} schema: ${errors.join('; ')}` };
  }

  /** Follows a response `$ref` to the Response Object, keeping track of where it lives. */
  private resolve(response: ResponseObject | { $ref: string }, pointer: string): { response: ResponseObject; pointer: string } {
    const ref = (response as { $ref?: string }).$ref;
    if (!ref) return { response: response as ResponseObject, pointer };
    const target = ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((node, segment) => (node as Record<string, unknown>)?.[segment.replace(/~1/g, '/').replace(/~0/g, '~')], this.document);
    if (!target) throw new Error(`Unresolvable response $ref ${ref}`);
    return this.resolve(target as ResponseObject, ref);
  }

  private validator(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) {
      // Compiled by reference into the registered document, so the schema's own $refs resolve.
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }
}

function mediaTypeMatches(declared: string, actual: string): boolean {
  if (declared === actual || declared === '*/*') return true;
  return declared.endsWith('/*') && actual.startsWith(declared.slice(0, -1));
}

function isJson(mediaType: string): boolean {
  return mediaType === 'application/json' || mediaType === 'text/json' || mediaType.endsWith('+json');
}
