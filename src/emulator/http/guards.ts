// Request guards that run before any route: fault injection, bearer authentication,
// the read-only rule and the optional per-client rate limit.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { verifyToken } from './auth.js';
import type { CoreContext } from '../core-context.js';
import { pathOf, sendProblem } from './problem.js';
import { RateLimiter, type RateLimitSettings } from './rate-limit.js';

export const TOKEN_PATH = '/auth/oauth/token';
/** The emulator's control API (src/emulator/control/): outside the service, guarded by its own token. */
export const CONTROL_PREFIX = '/_emulator/';
/** Served without a bearer token. */
const PUBLIC_PREFIXES = ['/auth/', '/_blobs/'];
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** POSTs that only read (searches carry their criteria in a body): open to read-only clients. */
export const READ_ONLY_POSTS = new Set(['/playbooks/search', '/playbooks/search/all']);

/** What reached the emulator: requests (the token endpoint left out), and those its rate limit refused (429). */
export interface Traffic {
  requests: number;
  throttled: number;
  /** Bytes written to clients' connections, headers and bodies (a resumed download is told by what it cost). */
  bytesSent: number;
  /** Bytes read from clients' connections (how far an upload got). */
  bytesReceived: number;
}

export interface GuardState {
  /** True when a fault, not a route, produced the response (the contract does not apply). */
  faultInjected(req: FastifyRequest): boolean;
}

export function registerGuards(app: FastifyInstance, ctx: CoreContext, rateLimit?: RateLimitSettings, traffic?: Traffic): GuardState {
  const injected = new WeakSet<FastifyRequest>();
  const resetAfter = new WeakSet<FastifyRequest>();
  const limiter = rateLimit && new RateLimiter(rateLimit);

  app.addHook('onRequest', async (req, reply) => {
    const path = pathOf(req.url);
    if (path.startsWith(CONTROL_PREFIX)) return;
    if (traffic && path !== TOKEN_PATH) traffic.requests++;
    const decision = ctx.faults.decide(req.method, path, path === TOKEN_PATH);
    if (decision.latencyMs > 0) await sleep(decision.latencyMs);
    if (!decision.kind) return;
    ctx.logger.debug({ method: req.method, path, fault: decision.kind }, 'injecting fault');
    if (decision.kind === 'reset-after') {
      resetAfter.add(req);
      return;
    }
    injected.add(req);
    if (decision.kind === 'reset') {
      reply.hijack();
      req.raw.socket.destroy();
      return reply;
    }
    if (decision.kind === '429' || decision.kind === '503') reply.header('retry-after', '1');
    return sendProblem(req, reply, Number(decision.kind), 'Injected fault.');
  });

  app.addHook('onRequest', async (req, reply) => {
    const path = pathOf(req.url);
    if (path.startsWith(CONTROL_PREFIX)) return;
    // A signed document link works on its own, unless the mode wants the token with it too.
    if (PUBLIC_PREFIXES.some((prefix) => path.startsWith(prefix)) && !(path.startsWith('/_blobs/') && ctx.modes.linkAuth === 'token')) return;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    const unauthorized = (detail: string) => {
      reply.header('www-authenticate', `Bearer error="invalid_token", error_description="${detail}"`);
      return sendProblem(req, reply, 401, detail);
    };
    if (!match) return unauthorized('A bearer token is required.');
    const verified = verifyToken(match[1] as string, ctx.tokenKey, ctx.audience, Math.floor(ctx.clock.nowMs() / 1000));
    if (!verified.ok) return unauthorized(verified.reason);
    const client = ctx.stores.tenants.client(verified.claims.client_id);
    if (!client || client.tenant !== verified.claims.tenant) return unauthorized('The token names an unknown client.');
    ctx.setCaller(req, {
      tenant: client.tenant,
      clientId: client.clientId,
      permissions: verified.claims.permissions,
      userId: client.clientId,
      userName: client.userName,
      userEmail: client.userEmail,
    });
    if (limiter) {
      const waitSeconds = limiter.take(client.clientId, ctx.clock.nowMs());
      if (waitSeconds > 0) {
        if (traffic) traffic.throttled++;
        injected.add(req);
        reply.header('retry-after', String(waitSeconds));
        return sendProblem(req, reply, 429, 'Rate limit exceeded.');
      }
    }
    // A read-only client writes nothing: every non-read method is refused, whatever the route,
    // except the searches, which change nothing.
    const readsOnly = READ_METHODS.has(req.method) || (req.method === 'POST' && READ_ONLY_POSTS.has(req.url.split('?')[0] ?? ''));
    if (!readsOnly && !verified.claims.permissions.includes('write')) {
      return sendProblem(req, reply, 403, 'This client is read-only.');
    }
  });

  // reset-after: the route did its work, then the client sees the connection drop instead of the answer.
  app.addHook('onSend', async (req, _reply, payload) => {
    if (resetAfter.has(req)) req.raw.socket.destroy();
    return payload;
  });

  return { faultInjected: (req) => injected.has(req) };
}
