// The route plugins, in registration order. A new API part adds its plugin here: each receives the
// one context (CoreContext), its state through the one registry (`ctx.stores`).
import type { CoreRoutePlugin } from '../core-context.js';
import { assemblyRoutes } from './assemblies.js';
import { blobRoutes } from './blobs.js';
import { documentRoutes } from './documents.js';
import { documentUploadRoutes } from './document-uploads.js';
import { embeddingRoutes } from './embeddings.js';
import { messageRoutes } from './messages.js';
import { modelRoutes } from './models.js';
import { notificationRoutes } from './notifications.js';
import { organizationMetadataOptionRoutes } from './organization-metadata-options.js';
import { assemblyReferenceRoutes } from './playbook-assembly-references.js';
import { playbookImportRoutes } from './playbook-import.js';
import { playbookMetadataRoutes } from './playbook-metadata.js';
import { playbookRoutes } from './playbooks.js';
import { projectRoutes } from './projects.js';
import { referenceMaterialRoutes } from './reference-materials.js';
import { tokenRoutes } from './token.js';

export const routePlugins: readonly CoreRoutePlugin[] = [
  tokenRoutes,
  blobRoutes,
  projectRoutes,
  organizationMetadataOptionRoutes,
  documentRoutes,
  playbookRoutes,
  playbookImportRoutes,
  playbookMetadataRoutes,
  referenceMaterialRoutes,
  assemblyRoutes,
  assemblyReferenceRoutes,
  documentUploadRoutes,
  modelRoutes,
  messageRoutes,
  embeddingRoutes,
  notificationRoutes,
];
