// The checkpoint store: where runs and items are remembered between invocations.
import { accessSync, constants, mkdtempSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ConfigurationError } from '../errors.js';
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

/**
 * The store at `path`, or a ConfigurationError (exit 2, before anything is sent) naming the file,
 * what is wrong with it, and where to point ferry instead: a folder that cannot be written (an
 * image's state volume mounted read-only), a read-only file, a folder where the file should be.
 */
export function openStore(path: string, opts?: SqliteStoreOptions): CheckpointStore {
  try {
    return new SqliteCheckpointStore(path, opts);
  } catch (err) {
    throw new ConfigurationError(`cannot open the checkpoint store ${path}: ${whyUnusable(path, err)}; point FERRY_STATE_DIR (or --state FILE) at a place ferry can write`, { cause: err });
  }
}

function exists(p: string): boolean {
  try {
    statSync(p);
    return true;
  } catch {
    return false;
  }
}

function whyUnusable(path: string, err: unknown): string {
  const writable = (p: string) => {
    try {
      accessSync(p, constants.W_OK);
      return true;
    } catch {
      return false;
    }
  };
  const st = exists(path) ? statSync(path) : undefined;
  if (st?.isDirectory()) return 'it is a folder, not a file';
  if (st && !writable(path)) return 'the file is read-only';
  if (!st && !writable(dirname(path))) return `the folder ${dirname(path)} ${exists(dirname(path)) ? 'cannot be written' : 'cannot be created'}`;
  return err instanceof Error ? err.message : String(err);
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
