// Holds every response of a fastify scope to an OpenAPI contract: the service's routes to
// src/contract/openapi.yaml (server.ts), the control API's to docs/emulator-control.openapi.yaml
// (control/routes.ts). A mismatch is recorded and logged; under `throw` it becomes a 500 naming it.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { Readable } from 'node:stream';
import { pathOf, problem } from './problem.js';
import type { ContractValidator, ContractViolation } from './validate.js';

export interface ContractHook {
  validator: ContractValidator;
  mode: 'record' | 'throw';
  violations: ContractViolation[];
  logger: Logger;
  /** True for a response the contract does not describe (an extension route, an injected fault). */
  skip?: (req: FastifyRequest) => boolean;
  /** The contract's path of a route (the service's host prefixes removed). */
  operationPath?: (route: string) => string;
}

export function holdToContract(app: FastifyInstance, hook: ContractHook): void {
  app.addHook('onSend', async (req, reply, payload) => {
    const route = req.routeOptions.url;
    // HEAD routes are fastify's automatic twins of GET routes; the contract describes the GETs.
    if (!route || req.method === 'HEAD' || hook.skip?.(req)) return payload;
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : payload instanceof Readable ? 'stream' : undefined;
    const contentType = reply.getHeader('content-type') as string | undefined;
    const result = hook.validator.check(req.method, hook.operationPath ? hook.operationPath(route) : route, reply.statusCode, contentType, body);
    if (!result.problem) return payload;
    const violation = { method: req.method, path: pathOf(req.url), status: reply.statusCode, operation: result.operation, problem: result.problem };
    hook.violations.push(violation);
    hook.logger.warn(violation, 'response does not match the contract');
    if (hook.mode !== 'throw') return payload;
    if (payload instanceof Readable) payload.destroy();
    reply.code(500).type('application/json; charset=utf-8');
    return JSON.stringify(problem(500, `Contract violation in ${violation.operation} (${violation.status}): ${violation.problem}`, violation.path));
  });
}
