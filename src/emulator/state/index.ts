// All of the core parts' stores, created over one database.
import type Database from 'better-sqlite3';
import { AssistantStore } from './assistants.js';
import { DocumentStore } from './documents.js';
import { MetaStore } from './meta.js';
import { ModelStore } from './models.js';
import { NotificationStore } from './notifications.js';
import { OrganizationMetadataStore } from './organization-metadata.js';
import { ProjectStore } from './projects.js';
import { TenantStore } from './tenants.js';

export interface Stores {
  meta: MetaStore;
  tenants: TenantStore;
  organizationMetadata: OrganizationMetadataStore;
  models: ModelStore;
  projects: ProjectStore;
  documents: DocumentStore;
  assistants: AssistantStore;
  notifications: NotificationStore;
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
  };
}
