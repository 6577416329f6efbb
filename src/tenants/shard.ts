// A migration split over N processes that never talk to each other (`--shard K/N`): each object
// goes to one shard by a hash of its source id. Apart from the selection it splits, so that reading
// the flag loads none of a migration.
import { ConfigurationError } from '../api/errors.js';

/** This process's share: shard `index` of `count`, 1-based. */
export interface Shard {
  index: number;
  count: number;
}

/** `K/N` with 1 <= K <= N: a usage error otherwise. */
export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = Number(m?.[1]);
  const count = Number(m?.[2]);
  if (!m || count < 1 || index < 1 || index > count) throw new ConfigurationError(`--shard "${text}" must be K/N with 1 <= K <= N, like 2/3`);
  return { index, count };
}

/**
 * The share of shard K of N: each object goes to one shard by a hash of its source id, the same in
 * every process, so N processes that never talk to each other split the selection exactly.
 */
export function shareOf<T extends { objectIdentifier: string }>(all: T[], shard: Shard | undefined): T[] {
  if (!shard || shard.count === 1) return all;
  return all.filter((o) => shardOf(o.objectIdentifier, shard.count) === shard.index);
}

/** 1-based shard of an id (FNV-1a over its text). */
export function shardOf(id: string, count: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193) >>> 0;
  return (h % count) + 1;
}
