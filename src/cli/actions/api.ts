// `ferry api METHOD PATH`: any call of the interface with auth handled, the way `gh api` serves GitHub.
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type { Command } from 'commander';
import { ConfigurationError } from '../../api/errors.js';
import { PagedList } from '../../api/paging.js';
import type { Host, QueryValue, RequestSpec } from '../../api/transport.js';
import type { MultipartPart } from '../../api/multipart.js';
import { createContext } from '../context.js';
import { METHODS } from '../commands/api.js';


interface ApiOptions {
  rawField: string[];
  field: string[];
  input?: string;
  paginate?: boolean;
  host?: Host;
  pageSize: string;
}

export async function apiAction(method: string, path: string, opts: ApiOptions, cmd: Command): Promise<void> {
  const spec = buildSpec(method, path, opts);
  const { client } = createContext(cmd);
  try {
    if (opts.paginate) await printAllPages(client.transport, spec, Number(opts.pageSize));
    else await printOne(client, spec, opts);
  } finally {
    await client.close();
  }
}


export function buildSpec(methodArg: string, pathArg: string, opts: Pick<ApiOptions, 'rawField' | 'field' | 'input' | 'host'>): RequestSpec & { bodyFile?: string } {
  const method = methodArg.toUpperCase();
  if (!METHODS.includes(method)) throw new ConfigurationError(`unknown method "${methodArg}": expected one of ${METHODS.join(', ')}`);
  if (!pathArg.startsWith('/')) throw new ConfigurationError(`path "${pathArg}" must start with /`);
  const url = new URL(pathArg, 'http://placeholder');
  const query: Record<string, QueryValue> = {};
  for (const [k, v] of url.searchParams) addParam(query, k, v);

  const params: Record<string, unknown> = {};
  // `-F key=@path`, as gh's: the file goes as a part of a multipart/form-data body (an upload).
  const files: MultipartPart[] = [];
  for (const f of opts.rawField) {
    const [k, v] = splitField(f);
    params[k] = v;
  }
  for (const f of opts.field) {
    const [k, v] = splitField(f);
    if (v.startsWith('@')) files.push({ name: k, file: { path: v.slice(1) } });
    else params[k] = typed(v);
  }
  if (files.length) {
    if (method !== 'POST' && method !== 'PUT') throw new ConfigurationError(`-F ${files[0]?.name}=@FILE sends a file in a form body, which ${method} has none of: use POST or PUT`);
    if (opts.input !== undefined) throw new ConfigurationError('give a file as -F key=@FILE or a body as --input, not both');
  }
  const host = opts.host ?? (url.pathname.startsWith('/models') ? 'settings' : 'base');
  if (host !== 'base' && host !== 'settings') throw new ConfigurationError(`--host must be base or settings, not "${host}"`);

  const paramsToQuery = method === 'GET' || method === 'DELETE' || opts.input !== undefined;
  if (paramsToQuery) {
    for (const [k, v] of Object.entries(params)) addParam(query, k, v as QueryValue);
  }
  // With a file, the other fields are the form's own: text parts before it, as a browser sends them.
  const multipart = files.length ? [...Object.entries(params).map(([name, v]) => ({ name, value: typeof v === 'string' ? v : JSON.stringify(v) })), ...files] : undefined;
  return {
    method,
    path: url.pathname,
    host,
    query,
    ...(multipart ? { multipart } : !paramsToQuery && Object.keys(params).length > 0 ? { json: params } : {}),
    ...(opts.input !== undefined ? { bodyFile: opts.input } : {}),
  };
}

async function printOne(
  client: import('../../api/client.js').FerryClient,
  spec: RequestSpec & { bodyFile?: string },
  _opts: ApiOptions,
): Promise<void> {
  const json = spec.bodyFile !== undefined ? await readJsonBody(spec.bodyFile) : spec.json;
  const res = await client.requestStream({ ...spec, json });
  const type = String(res.headers['content-type'] ?? '');
  if (type.includes('json') || type.startsWith('text/plain')) {
    const text = (await res.body.setEncoding('utf8').toArray()).join('');
    if (text.trim() === '') return;
    try {
      process.stdout.write(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
    } catch {
      process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    }
    return;
  }
  // Files (assembly content, document content) go to stdout byte for byte.
  await pipeline(res.body, process.stdout, { end: false });
}

/** Streams items out as one JSON array so memory stays flat however long the list. */
async function printAllPages(transport: import('../../api/transport.js').Transport, spec: RequestSpec, pageSize: number): Promise<void> {
  if (spec.method !== 'GET') throw new ConfigurationError('--paginate works with GET lists only');
  if (!Number.isInteger(pageSize) || pageSize < 1) throw new ConfigurationError('--page-size must be a positive whole number');
  const pageParam = /\/(template-columns|category-conditions)$/.test(spec.path) ? 'page' : 'pageNumber';
  const list = new PagedList<unknown>(
    (pageNumber, size, signal) => transport.json({ ...spec, query: { ...spec.query, [pageParam]: pageNumber, pageSize: size } }, { signal }),
    { pageSize },
  );
  let first = true;
  process.stdout.write('[');
  for await (const item of list) {
    process.stdout.write(`${first ? '\n' : ',\n'}${JSON.stringify(item)}`);
    first = false;
  }
  process.stdout.write(first ? ']\n' : '\n]\n');
}

async function readJsonBody(file: string): Promise<unknown> {
  const source = file === '-' ? process.stdin : createReadStream(file);
  let text: string;
  try {
    text = (await Readable.from(source).setEncoding('utf8').toArray()).join('');
  } catch (err) {
    throw new ConfigurationError(`cannot read --input ${file}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ConfigurationError(`--input ${file} is not valid JSON: ${(err as Error).message}`);
  }
}


function splitField(field: string): [string, string] {
  const i = field.indexOf('=');
  if (i <= 0) throw new ConfigurationError(`field "${field}" must look like key=value`);
  return [field.slice(0, i), field.slice(i + 1)];
}

function typed(value: string): unknown {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (value === 'null') return null;
  if (/^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  return value;
}

function addParam(query: Record<string, QueryValue>, key: string, value: QueryValue): void {
  const existing = query[key];
  if (existing === undefined) query[key] = value;
  else query[key] = [...(Array.isArray(existing) ? existing : [existing]), value] as (string | number | boolean)[];
}
