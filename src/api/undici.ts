// The parts of undici ferry uses, loaded alone. undici's index loads every dispatcher, fetch,
// WebSocket, the cache stores and the mocks: 0.26 s of a ferry start-up of 0.57 s on the test
// machine, against 0.10 s for the dispatcher, Agent, EnvHttpProxyAgent, errors and the request
// API alone (`node -e "require('undici')"` beside the same five requires, 5 runs each). undici
// has no exports map, so these are its own files, found the way its index finds them;
// test/api/undici-parts.test.ts holds each to what the index exports, so an undici that moves
// them fails the suite rather than a run.
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const load = createRequire(import.meta.url);

export const Dispatcher = load('undici/lib/dispatcher/dispatcher.js') as typeof Undici.Dispatcher;
export const Agent = load('undici/lib/dispatcher/agent.js') as typeof Undici.Agent;
export const EnvHttpProxyAgent = load('undici/lib/dispatcher/env-http-proxy-agent.js') as typeof Undici.EnvHttpProxyAgent;
export const errors = load('undici/lib/core/errors.js') as typeof Undici.errors;
const api = load('undici/lib/api/index.js') as { request: (this: Undici.Dispatcher, opts: Undici.Dispatcher.RequestOptions) => Promise<Undici.Dispatcher.ResponseData> } & Record<string, unknown>;
const global = load('undici/lib/global.js') as { getGlobalDispatcher(): Undici.Dispatcher };
// As the index does: a dispatcher's own request, stream and connect methods (a proxy's tunnel for
// https is a `connect`).
Object.assign(Dispatcher.prototype, api);

/** undici's `request(url, options)`, as its index makes it from the request API (makeDispatcher). */
export function request<TOpaque = null>(
  url: string | URL,
  opts: { dispatcher?: Undici.Dispatcher } & Omit<Undici.Dispatcher.RequestOptions<TOpaque>, 'origin' | 'path' | 'method'> & Partial<Pick<Undici.Dispatcher.RequestOptions, 'method'>>,
): Promise<Undici.Dispatcher.ResponseData<TOpaque>> {
  const parsed = typeof url === 'string' ? new URL(url) : url;
  const dispatcher = opts.dispatcher ?? global.getGlobalDispatcher();
  return api.request.call(dispatcher, {
    ...opts,
    origin: parsed.origin,
    path: parsed.search ? `${parsed.pathname}${parsed.search}` : parsed.pathname,
    method: opts.method ?? (opts.body ? 'PUT' : 'GET'),
  } as Undici.Dispatcher.RequestOptions) as Promise<Undici.Dispatcher.ResponseData<TOpaque>>;
}
