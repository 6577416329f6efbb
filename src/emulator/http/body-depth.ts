// Refuses a JSON body too deep to validate before the schema walks it: schema validation recurses
// per level, and a deep enough body would exhaust the call stack (a 400, not a crash).
import type { FastifyRequest } from 'fastify';
import { HttpError } from '../context.js';
import { MAX_JSON_DEPTH, nestingDepth } from '../service/rich-text.js';

/** A preValidation hook: refuses (400) a body nested deeper than MAX_JSON_DEPTH. */
export async function rejectDeepBodies(req: FastifyRequest): Promise<void> {
  if (nestingDepth(req.body) > MAX_JSON_DEPTH) throw new HttpError(400, 'Bad Request', `The body nests deeper than ${MAX_JSON_DEPTH} levels.`);
}
