// POST /inference/embeddings.
import type { CoreRoutePlugin } from '../core-context.js';
import { HttpError } from '../context.js';
import { countTokens, embed, EMBEDDING_DEFAULTS } from '../service/embeddings.js';
import { objectSchema } from './schemas.js';

export const embeddingRoutes: CoreRoutePlugin = (app, ctx) => {
  app.post<{ Body: { input: string | null; dimensions?: number | null } }>(
    '/inference/embeddings',
    {
      schema: {
        body: objectSchema({ input: { type: ['string', 'null'] }, dimensions: { type: ['integer', 'null'] } }, ['input']),
      },
    },
    async (req) => {
      ctx.requireWrite(req);
      const { input } = req.body;
      const dimensions = req.body.dimensions ?? EMBEDDING_DEFAULTS.dimensions;
      if (input === null) throw new HttpError(400, 'Bad Request', 'input must be a string.');
      if (dimensions < 1 || dimensions > EMBEDDING_DEFAULTS.maxDimensions) {
        throw new HttpError(400, 'Bad Request', `dimensions must be between 1 and ${EMBEDDING_DEFAULTS.maxDimensions}.`);
      }
      const tokens = countTokens(input);
      return {
        object: 'list',
        data: [{ object: 'embedding', index: 0, embedding: embed(input, dimensions) }],
        model: EMBEDDING_DEFAULTS.model,
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      };
    },
  );
};
