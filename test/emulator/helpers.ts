// Shared test plumbing: an emulator per test file, real HTTP over loopback with undici.
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { FormData, fetch, request } from 'undici';
import { expect } from 'vitest';
import { type EmulatorHandle, type EmulatorOptions, startEmulator } from '../../src/emulator/index.js';

export async function startTestEmulator(options: EmulatorOptions = {}): Promise<EmulatorHandle> {
  return startEmulator({ validateResponses: 'throw', processing: { minDelayMs: 1, maxDelayMs: 5, seed: 3 }, ...options });
}

export function expectNoContractViolations(handle: EmulatorHandle): void {
  expect(handle.contractViolations).toEqual([]);
  handle.contractViolations.length = 0;
}

export interface Response<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  text: string;
}

export async function token(handle: EmulatorHandle, tenantIndex = 0, readOnly = false): Promise<string> {
  const tenant = handle.tenants[tenantIndex]!;
  const res = await request(`${handle.authUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: readOnly ? tenant.readOnlyClientId : tenant.clientId,
      client_secret: readOnly ? tenant.readOnlyClientSecret : tenant.clientSecret,
      audience: handle.audience,
    }).toString(),
  });
  const body = (await res.body.json()) as { access_token: string };
  expect(res.statusCode).toBe(200);
  return body.access_token;
}

type Query = Record<string, string | number | boolean | readonly string[] | undefined>;

function withQuery(url: string, query?: Query): string {
  if (!query) return url;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) params.append(key, String(item));
  }
  const text = params.toString();
  return text ? `${url}?${text}` : url;
}

/** A client bound to one token and one host URL. */
export class Client {
  constructor(
    readonly baseUrl: string,
    readonly bearer: string | undefined,
  ) {}

  async call<T = any>(
    method: string,
    path: string,
    options: { query?: Query; json?: unknown; body?: string; headers?: Record<string, string> } = {},
  ): Promise<Response<T>> {
    const headers: Record<string, string> = { ...(this.bearer ? { authorization: `Bearer ${this.bearer}` } : {}) };
    if (options.json !== undefined) headers['content-type'] = 'application/json';
    Object.assign(headers, options.headers);
    const payload = options.json !== undefined ? JSON.stringify(options.json) : options.body;
    const res = await request(withQuery(`${this.baseUrl}${path}`, options.query), {
      method: method as 'GET',
      headers,
      ...(payload !== undefined ? { body: payload } : {}),
    });
    const text = await res.body.text();
    let body: unknown = text;
    if (String(res.headers['content-type'] ?? '').includes('json') && text) body = JSON.parse(text);
    return { status: res.statusCode, headers: res.headers as Response['headers'], body: body as T, text };
  }

  get<T = any>(path: string, query?: Query) {
    return this.call<T>('GET', path, { ...(query ? { query } : {}) });
  }

  post<T = any>(path: string, json?: unknown, query?: Query) {
    return this.call<T>('POST', path, { ...(json !== undefined ? { json } : {}), ...(query ? { query } : {}) });
  }

  put<T = any>(path: string, json: unknown) {
    return this.call<T>('PUT', path, { json });
  }

  patch<T = any>(path: string, json: unknown) {
    return this.call<T>('PATCH', path, { json });
  }

  delete<T = any>(path: string) {
    return this.call<T>('DELETE', path);
  }

  /** Multipart upload of one file to a project. */
  async upload(
    projectIdentifier: string,
    name: string,
    content: string | Uint8Array,
    options: { uploadIdentifier?: string; parent?: string; fields?: Record<string, string>; source?: string } = {},
  ): Promise<Response<any>> {
    const form = new FormData();
    for (const [key, value] of Object.entries(options.fields ?? {})) form.append(key, value);
    form.append('file', new Blob([typeof content === 'string' ? Buffer.from(content) : content]), name);
    const url = withQuery(`${this.baseUrl}/projects/${projectIdentifier}/documents`, {
      documentUploadIdentifier: options.uploadIdentifier ?? randomUUID(),
      parentObjectIdentifier: options.parent,
      source: options.source,
    });
    const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${this.bearer}` }, body: form });
    const text = await res.text();
    return { status: res.status, headers: Object.fromEntries(res.headers), body: text ? JSON.parse(text) : undefined, text };
  }

  /** Polls the document list (bounded by count) until nothing of the upload is in progress. */
  async processed(projectIdentifier: string, uploadIdentifier: string): Promise<any[]> {
    for (let attempt = 0; attempt < 500; attempt++) {
      const res = await this.get(`/projects/${projectIdentifier}/documents`, {
        uploadObjectIdentifier: uploadIdentifier,
        flattenList: true,
        pageSize: 1000,
      });
      expect(res.status).toBe(200);
      if (res.body.items.every((d: any) => d.uploadInProgress === false)) return res.body.items;
      await sleep(5);
    }
    throw new Error(`Upload ${uploadIdentifier} still processing after 500 polls`);
  }
}

export async function clientFor(handle: EmulatorHandle, tenantIndex = 0, readOnly = false): Promise<Client> {
  return new Client(handle.baseUrl, await token(handle, tenantIndex, readOnly));
}

export function projectOf(handle: EmulatorHandle, tenantIndex = 0): string {
  return handle.tenants[tenantIndex]!.assistants[0]!.projectIdentifier;
}
