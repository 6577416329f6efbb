// The route plugins, in registration order. A new API part adds its plugin here
// (a RoutePlugin from context.ts fits: it sees only the EmulatorContext).
import type { CoreRoutePlugin } from '../coreContext.js';
import { blobRoutes } from './blobs.js';
import { documentRoutes } from './documents.js';
import { embeddingRoutes } from './embeddings.js';
import { messageRoutes } from './messages.js';
import { modelRoutes } from './models.js';
import { notificationRoutes } from './notifications.js';
import { organizationMetadataOptionRoutes } from './organizationMetadataOptions.js';
import { projectRoutes } from './projects.js';
import { tokenRoutes } from './token.js';

export const routePlugins: readonly CoreRoutePlugin[] = [
  tokenRoutes,
  blobRoutes,
  projectRoutes,
  organizationMetadataOptionRoutes,
  documentRoutes,
  modelRoutes,
  messageRoutes,
  embeddingRoutes,
  notificationRoutes,
];
