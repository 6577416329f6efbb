// The stores of the playbook parts, created once per database and shared by their route plugins
// (each plugin asks for them; the first one creates the tables).
import type Database from 'better-sqlite3';
import { AssemblyStore } from './assemblies.js';
import { AssemblyReferenceItemStore, type CategoryConditionRecord, type TemplateColumnRecord } from './assembly-reference-items.js';
import { DocumentUploadStore } from './document-uploads.js';
import { PlaybookImportStore } from './playbook-imports.js';
import { PlaybookMetadataStore } from './playbook-metadata.js';
import { PlaybookStore } from './playbooks.js';
import { ReferenceMaterialStore } from './reference-materials.js';

export interface PlaybookStores {
  playbooks: PlaybookStore;
  metadata: PlaybookMetadataStore;
  referenceMaterials: ReferenceMaterialStore;
  assemblies: AssemblyStore;
  templateColumns: AssemblyReferenceItemStore<TemplateColumnRecord>;
  categoryConditions: AssemblyReferenceItemStore<CategoryConditionRecord>;
  documentUploads: DocumentUploadStore;
  imports: PlaybookImportStore;
}

const byDatabase = new WeakMap<Database.Database, PlaybookStores>();

export function playbookStores(db: Database.Database): PlaybookStores {
  let stores = byDatabase.get(db);
  if (!stores) {
    // Parents before children: the children's tables reference the parents'.
    stores = {
      playbooks: new PlaybookStore(db),
      metadata: new PlaybookMetadataStore(db),
      referenceMaterials: new ReferenceMaterialStore(db),
      assemblies: new AssemblyStore(db),
      templateColumns: new AssemblyReferenceItemStore<TemplateColumnRecord>(db, 'template_columns'),
      categoryConditions: new AssemblyReferenceItemStore<CategoryConditionRecord>(db, 'category_conditions'),
      documentUploads: new DocumentUploadStore(db),
      imports: new PlaybookImportStore(db),
    };
    byDatabase.set(db, stores);
  }
  return stores;
}
