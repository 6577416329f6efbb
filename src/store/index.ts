// The checkpoint store: where runs and items are remembered between invocations.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { SqliteCheckpointStore, type SqliteStoreOptions } from './sqlite.js';
import type { CheckpointStore } from './types.js';

export type * from './types.js';
export { SqliteCheckpointStore } from './sqlite.js';

/** One database per profile: `$XDG_STATE_HOME/ferry/<profile>.sqlite` unless FERRY_STATE_DIR says otherwise. */
export function defaultStorePath(profile: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const dir = env.FERRY_STATE_DIR || join(env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'ferry');
  const name = (profile ?? 'default').replace(/[^A-Za-z0-9._-]/g, '_');
  return join(dir, `${name}.sqlite`);
}

export function openStore(path: string, opts?: SqliteStoreOptions): CheckpointStore {
  return new SqliteCheckpointStore(path, opts);
}
