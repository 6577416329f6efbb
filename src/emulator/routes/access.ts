// Who may see what: resources of another tenant, or another user's personal project,
// answer 404 exactly like resources that do not exist (nothing leaks).
import type { FastifyRequest } from 'fastify';
import type { CoreContext } from '../core-context.js';
import { type EmulatorContext, HttpError } from '../context.js';
import type { Owner, ProjectRecord } from '../state/projects.js';

export function visibleProject(ctx: CoreContext, req: FastifyRequest, projectIdentifier: string): ProjectRecord {
  const caller = ctx.caller(req);
  const project = ctx.stores.projects.find(caller.tenant, caller.userId, projectIdentifier);
  if (!project) throw new HttpError(404, 'Not Found', `Project ${projectIdentifier} does not exist.`);
  return project;
}

export function ownerOf(ctx: EmulatorContext, req: FastifyRequest): Owner {
  const caller = ctx.caller(req);
  return { id: caller.userId, name: caller.userName, email: caller.userEmail };
}
