import { Resource, pagedGet, seg } from './resource.js';
import type { ListOptions, PagedList } from '../paging.js';
import type { CallOptions } from '../transport.js';
import type { Notification } from '../types.js';

export class Notifications extends Resource {
  list(opts: ListOptions = {}): PagedList<Notification> {
    return pagedGet(this.t, '/notifications', {}, opts);
  }
  delete(objectIdentifier: string, opts: CallOptions = {}): Promise<void> {
    return this.t.json({ method: 'DELETE', path: `/notifications/${seg(objectIdentifier)}` }, opts);
  }
  /** Marks a notification read (or unread); setting a flag twice is harmless, so it is retried. */
  markRead(objectIdentifier: string, isRead = true, opts: CallOptions = {}): Promise<void> {
    return this.t.json({ method: 'PATCH', path: `/notifications/${seg(objectIdentifier)}`, json: { isRead } }, { idempotent: true, ...opts });
  }
}
