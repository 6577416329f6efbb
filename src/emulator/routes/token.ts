// The auth host: OAuth 2.0 client-credentials token endpoint (form-urlencoded).
import type { FastifyReply } from 'fastify';
import { signToken } from '../http/auth.js';
import type { CoreRoutePlugin } from '../core-context.js';
import { TOKEN_PATH } from '../http/guards.js';

function oauthError(reply: FastifyReply, status: 400 | 401, error: string, description: string): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').send({ error, error_description: description });
}

export const tokenRoutes: CoreRoutePlugin = (app, ctx) => {
  app.post(TOKEN_PATH, async (req, reply) => {
    if (!req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
      return oauthError(reply, 400, 'invalid_request', 'The body must be application/x-www-form-urlencoded.');
    }
    const form = req.body as Record<string, string>;
    const missing = ['grant_type', 'client_id', 'client_secret', 'audience'].filter((field) => !form[field]);
    if (missing.length > 0) return oauthError(reply, 400, 'invalid_request', `Missing ${missing.join(', ')}.`);
    if (form.grant_type !== 'client_credentials') {
      return oauthError(reply, 400, 'unsupported_grant_type', 'Only client_credentials is supported.');
    }
    const client = ctx.stores.tenants.client(form.client_id as string);
    if (!client || client.clientSecret !== form.client_secret) {
      return oauthError(reply, 401, 'invalid_client', 'Unknown client or wrong secret.');
    }
    if (form.audience !== ctx.audience) return oauthError(reply, 400, 'invalid_request', `Unknown audience; use ${ctx.audience}.`);
    const iat = Math.floor(ctx.clock.nowMs() / 1000);
    const token = signToken(
      {
        sub: client.clientId,
        client_id: client.clientId,
        tenant: client.tenant,
        permissions: client.canWrite ? ['read', 'write'] : ['read'],
        aud: ctx.audience,
        iat,
        exp: iat + ctx.tokenTtlSeconds,
      },
      ctx.tokenKey,
    );
    return reply.header('cache-control', 'no-store').send({ access_token: token, token_type: 'Bearer', expires_in: ctx.tokenTtlSeconds });
  });
};
