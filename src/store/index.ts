// The checkpoint store: where runs and items are remembered between invocations.
import { mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
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

/**
 * A throwaway store in a temporary folder, removed by `dispose`: what a dry run adopts a listing
 * into, so that its plan matches the run's decisions without writing to the real store.
 */
export function openScratchStore(): { store: CheckpointStore; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-scratch-'));
  const store = new SqliteCheckpointStore(join(dir, 'scratch.sqlite'));
  return {
    store,
    dispose() {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
