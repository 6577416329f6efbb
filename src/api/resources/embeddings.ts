import { Resource } from './resource.js';
import type { CallOptions } from '../transport.js';
import type { EmbeddingRequest, EmbeddingResult } from '../types.js';

export class Embeddings extends Resource {
  /** Embeds text. Computing an embedding changes nothing, so the POST is retried like a GET. */
  create(input: EmbeddingRequest, opts: CallOptions<EmbeddingResult> = {}): Promise<EmbeddingResult> {
    return this.t.json({ method: 'POST', path: '/inference/embeddings', json: input }, { idempotent: true, ...opts });
  }
}
