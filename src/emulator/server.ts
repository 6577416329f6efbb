// Builds the fastify app: one port serves the base API, the settings host (under
// /settings) and the auth host (under /auth), told apart by path prefix.
import fastifyMultipart from '@fastify/multipart';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, LogController } from 'fastify';
import type { PageCap } from './control/control.js';
import { holdToContract } from './http/contract-hook.js';
import type { CoreContext, CoreRoutePlugin } from './core-context.js';
import { HttpError } from './context.js';
import { registerGuards, type Traffic } from './http/guards.js';
import { MULTIPART_LIMITS } from './http/multipart-form.js';
import { pathOf, sendProblem } from './http/problem.js';
import type { RateLimitSettings } from './http/rate-limit.js';
import type { ContractValidator, ContractViolation } from './http/validate.js';

export interface ServerOptions {
  routes: readonly CoreRoutePlugin[];
  rateLimit?: RateLimitSettings;
  /** Counted as requests arrive. */
  traffic?: Traffic;
  validator?: ContractValidator;
  /** `throw`: a mismatching response becomes a 500 naming the mismatch. */
  validationMode: 'record' | 'throw';
  violations: ContractViolation[];
  /** Largest page any list returns: larger (or absent) page sizes are cut to it without a word. Read at each request: the control API may change it. */
  pageCap: PageCap;
  /** https with this key and certificate (PEM); plain http without. */
  tls?: { key: string | Buffer; cert: string | Buffer };
}

/** Path prefixes of the other hosts, removed before looking an operation up in the contract. */
const HOST_PREFIXES = /^\/(settings|auth)(?=\/)/;

export async function buildServer(ctx: CoreContext, options: ServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.logger as FastifyBaseLogger,
    // Request logs must not carry query strings (signed URLs) or headers (tokens).
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { maxParamLength: 500 },
    // close() must not wait for keep-alive connections: one whose response finishes just
    // after close() starts would otherwise hold it for the whole keep-alive timeout.
    forceCloseConnections: true,
    // Typed as the plain http server's: the routes see the same requests either way.
    ...(options.tls ? { https: options.tls } : {}),
  }) as unknown as FastifyInstance;

  // Multipart bodies are read as streams by the routes that accept them (see multipartForm.ts).
  // preservePath: a file name is the client's to choose; busboy would otherwise cut it at the
  // last `/` or `\\` and `back\\slash.txt` would arrive as `slash.txt`.
  await app.register(fastifyMultipart, { limits: MULTIPART_LIMITS, preservePath: true });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) =>
    done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  const json = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('text/json', { parseAs: 'string' }, json);
  app.addContentTypeParser(/^application\/[a-z0-9.+-]+\+json$/, { parseAs: 'string' }, json);

  app.setErrorHandler((error: FastifyError | HttpError, req, reply) => {
    if (error instanceof HttpError) return sendProblem(req, reply, error.status, error.detail ?? null, error.title);
    if (error.validation) return sendProblem(req, reply, 400, error.message, 'One or more validation errors occurred.');
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return sendProblem(req, reply, 400, error.message);
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return sendProblem(req, reply, status, error.message);
    ctx.logger.error({ err: error, method: req.method, path: pathOf(req.url) }, 'request failed');
    return sendProblem(req, reply, 500, 'The emulator failed to handle the request.');
  });
  app.setNotFoundHandler((req, reply) => sendProblem(req, reply, 404, `No route ${req.method} ${pathOf(req.url)}.`));

  const guards = registerGuards(app, ctx, options.rateLimit, options.traffic);
  capPageSizes(app, options.pageCap);

  if (options.validator) {
    holdToContract(app, {
      validator: options.validator,
      mode: options.validationMode,
      violations: options.violations,
      logger: ctx.logger,
      skip: (req) => req.routeOptions.config.contract === false || guards.faultInjected(req),
      operationPath: (route) => route.replace(HOST_PREFIXES, ''),
    });
  }

  for (const plugin of options.routes) await app.register(async (scope) => plugin(scope, ctx));
  return app;
}

/**
 * `--max-page-size N`: as services that cap page sizes do, a list asked for more (or for its
 * default) answers with at most N items and says nothing. Applied before validation, to the
 * query's `pageSize` and to a search body's.
 */
function capPageSizes(app: FastifyInstance, cap: PageCap): void {
  app.addHook('preValidation', async (req) => {
    const max = cap.max;
    if (max === undefined) return;
    const schema = req.routeOptions.schema as { querystring?: { properties?: Record<string, unknown> }; body?: { properties?: Record<string, unknown> } } | undefined;
    const query = req.query as Record<string, unknown> | undefined;
    if (query && schema?.querystring?.properties?.pageSize) {
      const asked = query.pageSize === undefined ? Infinity : Number(query.pageSize);
      if (!(asked <= max)) query.pageSize = String(max);
    }
    const body = req.body as Record<string, unknown> | undefined;
    if (body && typeof body === 'object' && !Array.isArray(body) && schema?.body?.properties?.pageSize) {
      const asked = body.pageSize === undefined || body.pageSize === null ? Infinity : Number(body.pageSize);
      if (!(asked <= max)) body.pageSize = max;
    }
  });
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: an extension or internal route that the contract does not describe. */
    contract?: boolean;
  }
}
