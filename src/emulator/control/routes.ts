// The control API over HTTP, under /_emulator/ on the service's own port and outside its contract
// (docs/emulator-control.openapi.yaml describes it; docs/emulator.md, "In your own tests", uses it).
// Every route but health wants the admin token: no token or another one is a 401, a tenant's token
// a 403. The token is compared in constant time and never logged. The guards of the service's
// routes (faults, tenants' tokens, the rate limit, the traffic count) leave this prefix alone, so a
// test can always clear the faults it set.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { verifyToken } from '../http/auth.js';
import { CONTROL_PREFIX } from '../http/guards.js';
import type { CoreContext, CoreRoutePlugin } from '../core-context.js';
import { holdToContract } from '../http/contract-hook.js';
import { sendProblem } from '../http/problem.js';
import type { ContractValidator, ContractViolation } from '../http/validate.js';
import type { Control } from './control.js';

export { CONTROL_PREFIX };

export interface ControlRouteOptions {
  control: Control;
  adminToken: string;
  /** Holds each response to docs/emulator-control.openapi.yaml, as the service's are held to theirs. */
  validator?: ContractValidator | undefined;
  validationMode: 'record' | 'throw';
  violations: ContractViolation[];
}

type Body = Record<string, unknown> | undefined;

export function controlRoutes(options: ControlRouteOptions): CoreRoutePlugin {
  const { control } = options;
  const admin = digest(options.adminToken);
  return async (app: FastifyInstance, ctx: CoreContext) => {
    // A control body is JSON; an empty one (a POST with nothing to say) is an empty object.
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, text, done) => {
      if (text === '' || text === undefined) return done(null, {});
      try {
        done(null, JSON.parse(text as string));
      } catch {
        done(Object.assign(new Error('The body is not valid JSON.'), { statusCode: 400 }), undefined);
      }
    });

    app.addHook('onRequest', async (req, reply) => {
      if (req.routeOptions.config.control === 'open') return;
      const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
      if (!match) {
        reply.header('www-authenticate', 'Bearer realm="ferry emulator control"');
        return sendProblem(req, reply, 401, 'The control API wants the admin token (the ready line\'s adminToken, or --admin-token).');
      }
      const given = match[1] as string;
      if (timingSafeEqual(digest(given), admin)) return;
      if (verifyToken(given, ctx.tokenKey, ctx.audience, Math.floor(ctx.clock.nowMs() / 1000)).ok) {
        return sendProblem(req, reply, 403, "A tenant's token does not open the control API; it wants the admin token.");
      }
      reply.header('www-authenticate', 'Bearer realm="ferry emulator control", error="invalid_token"');
      return sendProblem(req, reply, 401, 'That is not the admin token.');
    });

    if (options.validator) holdToContract(app, { validator: options.validator, mode: options.validationMode, violations: options.violations, logger: ctx.logger });

    const config = { contract: false as const };
    const route = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, handler: (req: FastifyRequest, reply: FastifyReply) => unknown, open = false) =>
      app.route({ method, url: `${CONTROL_PREFIX}${path}`, config: { ...config, ...(open ? { control: 'open' as const } : {}) }, handler: async (req, reply) => handler(req, reply) });
    const body = (req: FastifyRequest): Record<string, unknown> => {
      const b = req.body as Body;
      return b && typeof b === 'object' && !Array.isArray(b) ? b : {};
    };
    const param = (req: FastifyRequest, name: string) => (req.params as Record<string, string>)[name] as string;

    route('GET', 'health', () => ({ status: 'ready' }), true);

    route('POST', 'reset', () => {
      control.reset();
      return { reset: true, snapshots: control.snapshots().length };
    });

    route('GET', 'snapshots', () => ({ snapshots: control.snapshots() }));
    route('POST', 'snapshots', (req, reply) => {
      const { name, replace } = body(req);
      reply.code(201);
      return control.takeSnapshot(name, replace === true);
    });
    route('POST', 'snapshots/:name/restore', (req) => control.restoreSnapshot(param(req, 'name')));
    route('DELETE', 'snapshots/:name', (req, reply) => {
      control.deleteSnapshot(param(req, 'name'));
      return reply.code(204).send();
    });

    route('PUT', 'faults', (req, reply) => {
      const { spec } = body(req);
      if (typeof spec !== 'string') return sendProblem(req, reply, 400, `faults want {"spec": "..."} in the --faults syntax (e.g. "503=1"), not ${JSON.stringify(req.body)}`);
      control.setFaults(spec);
      return { spec };
    });
    route('DELETE', 'faults', (_req, reply) => {
      control.clearFaults();
      return reply.code(204).send();
    });

    route('PUT', 'listing-lag', (req) => {
      const { ms } = body(req);
      control.setListingLag(ms);
      return { ms };
    });

    route('GET', 'modes', () => control.modes());
    route('PUT', 'modes', (req) => {
      control.setModes(req.body);
      return control.modes();
    });

    route('GET', 'processing', () => control.processing());
    route('PUT', 'processing', (req) => {
      control.setProcessing(body(req));
      return control.processing();
    });
    route('POST', 'processing/drain', async () => ({ processed: await control.drain() }));

    route('POST', 'clock/advance', (req) => ({ now: control.advanceClock(body(req).ms) }));

    route('GET', 'tenants/:name/credits', (req) => ({ credits: control.credits(param(req, 'name')) }));
    route('PUT', 'tenants/:name/credits', (req) => {
      const name = param(req, 'name');
      control.setCredits(name, body(req).credits);
      return { credits: control.credits(name) };
    });

    route('GET', 'traffic', () => control.traffic());
  };
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `open`: a control route served without the admin token (health). */
    control?: 'open';
  }
}
