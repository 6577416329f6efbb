// ProblemDetails (RFC 9457 shape) error bodies. Served as application/json: the
// contract lists application/problem+json nowhere.
import type { FastifyReply, FastifyRequest } from 'fastify';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

const TYPES: Record<number, string> = {
  400: 'https://tools.ietf.org/html/rfc9110#section-15.5.1',
  401: 'https://tools.ietf.org/html/rfc9110#section-15.5.2',
  403: 'https://tools.ietf.org/html/rfc9110#section-15.5.4',
  404: 'https://tools.ietf.org/html/rfc9110#section-15.5.5',
  409: 'https://tools.ietf.org/html/rfc9110#section-15.5.10',
  413: 'https://tools.ietf.org/html/rfc9110#section-15.5.14',
  429: 'https://tools.ietf.org/html/rfc6585#section-4',
  500: 'https://tools.ietf.org/html/rfc9110#section-15.6.1',
  502: 'https://tools.ietf.org/html/rfc9110#section-15.6.3',
  503: 'https://tools.ietf.org/html/rfc9110#section-15.6.4',
};

export interface ProblemDetails {
  type: string | null;
  title: string | null;
  status: number;
  detail: string | null;
  instance: string | null;
  [extension: string]: unknown;
}

export function problem(status: number, detail: string | null, instance: string | null, title?: string): ProblemDetails {
  return { type: TYPES[status] ?? null, title: title ?? TITLES[status] ?? 'Error', status, detail, instance };
}

export function sendProblem(req: FastifyRequest, reply: FastifyReply, status: number, detail: string | null, title?: string): FastifyReply {
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .send(problem(status, detail, pathOf(req.url), title));
}

/** The request path without its query (which may hold signatures). */
export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
