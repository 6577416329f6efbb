// Import in server mode: the archive posted to POST /playbooks/import (202 and a task), then the
// end of the task read from the notifications, the only place the interface tells it. The task is
// recorded in the id map before the post, so a run stopped while waiting waits on the same task
// instead of posting a second copy.
import { poll } from '../runner/poll.js';
import type { FerryClient } from '../api/client.js';
import { FerryError } from '../api/errors.js';
import type { Notification } from '../api/types.js';
import type { IdMap, MapOutcome } from '../mapping/id-map.js';
import type { OpenedArchive } from './read.js';

export class ImportTimeoutError extends FerryError {}

export interface ServerImportResult {
  taskIdentifier: string;
  outcome: MapOutcome;
  succeeded: boolean;
  playbookIdentifier?: string;
  /** The service's words, from the notification. */
  message: string | null;
}

export async function serverImport(archive: OpenedArchive, client: FerryClient, ids: IdMap, key: string, opts: { timeoutMs: number; signal: AbortSignal }): Promise<ServerImportResult> {
  const task = await ids.ensure(
    'task',
    key,
    async () => (await client.playbooks.import({ path: archive.path, filename: 'playbook.zip' })).taskObjectIdentifier as string,
    // A post whose answer was lost cannot be told from one that never arrived: no task id to
    // look for. It is posted again; the second copy is the one reported.
    async () => undefined,
  );
  const notification = await waitForTask(client, task.id, opts);
  const values = Object.entries(notification.resourceIdentifiers ?? {});
  const playbook = values.find(([k, v]) => k !== 'taskObjectIdentifier' && v !== task.id && /playbook/i.test(k))?.[1];
  return {
    taskIdentifier: task.id,
    outcome: task.outcome,
    succeeded: playbook !== undefined,
    ...(playbook ? { playbookIdentifier: playbook } : {}),
    message: notification.message ?? notification.title ?? null,
  };
}

/** Polls the notifications (200 ms, doubling to 5 s) until one names the task. */
async function waitForTask(client: FerryClient, task: string, opts: { timeoutMs: number; signal: AbortSignal }): Promise<Notification> {
  return poll(
    async () => {
      for await (const n of client.notifications.list()) {
        if (Object.values(n.resourceIdentifiers ?? {}).includes(task)) return n;
      }
      return undefined;
    },
    { firstMs: 200, maxMs: 5_000, timeoutMs: opts.timeoutMs, signal: opts.signal },
    () => new ImportTimeoutError(`import task ${task} did not end within ${Math.round(opts.timeoutMs / 1000)} s; run the same import again to wait on it`),
  );
}
