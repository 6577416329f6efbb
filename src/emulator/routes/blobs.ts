// Serves signed blob URLs (see blobUrls.ts) without a bearer token, with Range as the content route.
import { signatureMatches } from '../http/blob-urls.js';
import type { CoreRoutePlugin } from '../core-context.js';
import { sendProblem } from '../http/problem.js';
import { sendContent } from '../http/content-range.js';

export const blobRoutes: CoreRoutePlugin = (app, ctx) => {
  app.get<{ Params: { '*': string }; Querystring: { exp?: string; ct?: string; sig?: string } }>(
    '/_blobs/*',
    { config: { contract: false } },
    async (req, reply) => {
      const key = req.params['*'];
      const { exp, ct, sig } = req.query;
      const expiresAtSeconds = Number(exp);
      if (!exp || !ct || !sig || !Number.isInteger(expiresAtSeconds) || !signatureMatches({ key, expiresAtSeconds, contentType: ct }, sig, ctx.blobUrlKey)) {
        return sendProblem(req, reply, 403, 'The signature is invalid.');
      }
      if (expiresAtSeconds <= Math.floor(ctx.clock.nowMs() / 1000)) return sendProblem(req, reply, 403, 'The URL has expired.');
      const content = ctx.blobs.get(key);
      const size = ctx.blobs.size(key);
      if (!content || size === undefined) return sendProblem(req, reply, 404, 'The blob does not exist.');
      return sendContent(req, reply, ctx.blobs, ctx.modes, { key, size, etag: `"${key}"`, type: ct }, content, ctx.faults.corruptsContent());
    },
  );
};
