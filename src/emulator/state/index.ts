// Every store of the emulator's state, created once over one database: the one registry the
// routes reach through their context (`ctx.stores`). Parents before children: the children's tables
// reference the parents'.
import type Database from 'better-sqlite3';
import { AssistantStore } from './assistants.js';
import { DocumentStore } from './documents.js';
import { MetaStore } from './meta.js';
import { ModelStore } from './models.js';
import { NotificationStore } from './notifications.js';
import { OrganizationMetadataStore } from './organization-metadata.js';
import { ProjectStore } from './projects.js';
import { TenantStore } from './tenants.js';
import { createPlaybookStores, type PlaybookStores } from './playbook-stores.js';

export interface Stores {
  meta: MetaStore;
  tenants: TenantStore;
  organizationMetadata: OrganizationMetadataStore;
  models: ModelStore;
  projects: ProjectStore;
  documents: DocumentStore;
  assistants: AssistantStore;
  notifications: NotificationStore;
  /** The playbook parts' stores. */
  playbook: PlaybookStores;
}

export function createStores(db: Database.Database): Stores {
  return {
    meta: new MetaStore(db),
    tenants: new TenantStore(db),
    organizationMetadata: new OrganizationMetadataStore(db),
    models: new ModelStore(db),
    projects: new ProjectStore(db),
    documents: new DocumentStore(db),
    assistants: new AssistantStore(db),
    notifications: new NotificationStore(db),
    playbook: createPlaybookStores(db),
  };
}
