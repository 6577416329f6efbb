// The stores of the playbook parts, part of the one registry (state/index.ts, `ctx.stores.playbook`).
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

export function createPlaybookStores(db: Database.Database): PlaybookStores {
  // Parents before children: the children's tables reference the parents'.
  return {
    playbooks: new PlaybookStore(db),
    metadata: new PlaybookMetadataStore(db),
    referenceMaterials: new ReferenceMaterialStore(db),
    assemblies: new AssemblyStore(db),
    templateColumns: new AssemblyReferenceItemStore<TemplateColumnRecord>(db, 'template_columns'),
    categoryConditions: new AssemblyReferenceItemStore<CategoryConditionRecord>(db, 'category_conditions'),
    documentUploads: new DocumentUploadStore(db),
    imports: new PlaybookImportStore(db),
  };
}
