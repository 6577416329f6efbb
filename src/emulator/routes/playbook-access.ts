// Who may reach a playbook and what hangs off it: another tenant's playbook, or another user's
// private one, answers 404 exactly like one that does not exist.
import type { FastifyRequest } from 'fastify';
import { type EmulatorContext, HttpError } from '../context.js';
import type { AssemblyRecord } from '../state/assemblies.js';
import type { PlaybookRecord } from '../state/playbooks.js';
import type { PlaybookStores } from '../state/playbook-stores.js';
import { objectSchema, uuid } from './schemas.js';

export type PlaybookParams = { playbookIdentifier: string };
export type PlaybookItemParams = PlaybookParams & { objectIdentifier: string };

export const playbookParams = objectSchema({ playbookIdentifier: uuid }, ['playbookIdentifier']);
export const playbookItemParams = objectSchema({ playbookIdentifier: uuid, objectIdentifier: uuid }, ['playbookIdentifier', 'objectIdentifier']);

export function notFound(what: string, id: string): HttpError {
  return new HttpError(404, 'Not Found', `${what} ${id} does not exist.`);
}

export function visiblePlaybook(ctx: EmulatorContext, stores: PlaybookStores, req: FastifyRequest, playbookIdentifier: string): PlaybookRecord {
  const caller = ctx.caller(req);
  const playbook = stores.playbooks.find(caller.tenant, caller.userId, playbookIdentifier);
  if (!playbook) throw notFound('Playbook', playbookIdentifier);
  return playbook;
}

export function visibleAssembly(
  ctx: EmulatorContext,
  stores: PlaybookStores,
  req: FastifyRequest,
  playbookIdentifier: string,
  assemblyIdentifier: string,
): AssemblyRecord {
  const playbook = visiblePlaybook(ctx, stores, req, playbookIdentifier);
  const assembly = stores.assemblies.find(playbook.objectIdentifier, assemblyIdentifier);
  if (!assembly) throw notFound('Assembly', assemblyIdentifier);
  return assembly;
}
