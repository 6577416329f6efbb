// The typed client: one transport core, one small resource per API part.
import { Transport, type CallOptions, type ClientOptions, type RequestSpec, type StreamResponse } from './transport.js';
import { Projects } from './resources/projects.js';
import { Documents } from './resources/documents.js';
import { OrganizationMetadataOptions } from './resources/organization-metadata.js';
import { Playbooks } from './resources/playbooks.js';
import { PlaybookMetadata } from './resources/playbook-metadata.js';
import { ReferenceMaterials } from './resources/reference-materials.js';
import { Assemblies } from './resources/assemblies.js';
import { TemplateColumns } from './resources/template-columns.js';
import { CategoryConditions } from './resources/category-conditions.js';
import { DocumentUploads } from './resources/document-uploads.js';
import { Models } from './resources/models.js';
import { Messages } from './resources/messages.js';
import { Embeddings } from './resources/embeddings.js';
import { Notifications } from './resources/notifications.js';

import { hostOf, type Target } from './target.js';

export { describeTarget, type Target } from './target.js';

export class FerryClient {
  readonly transport: Transport;
  readonly projects: Projects;
  readonly documents: Documents;
  readonly organizationMetadataOptions: OrganizationMetadataOptions;
  readonly playbooks: Playbooks;
  readonly playbookMetadata: PlaybookMetadata;
  readonly referenceMaterials: ReferenceMaterials;
  readonly assemblies: Assemblies;
  readonly templateColumns: TemplateColumns;
  readonly categoryConditions: CategoryConditions;
  readonly documentUploads: DocumentUploads;
  readonly models: Models;
  readonly messages: Messages;
  readonly embeddings: Embeddings;
  readonly notifications: Notifications;

  /** Which tenant this client talks to, as summaries name it: host, client id, profile. */
  readonly target: Target;

  constructor(opts: ClientOptions) {
    const t = (this.transport = new Transport(opts));
    this.target = { host: hostOf(t.address.baseUrl), clientId: opts.credentials.clientId, ...(opts.label ? { profile: opts.label } : {}), ...(t.plainHttp.length ? { plainHttp: t.plainHttp } : {}) };
    this.projects = new Projects(t);
    this.documents = new Documents(t);
    this.organizationMetadataOptions = new OrganizationMetadataOptions(t);
    this.playbooks = new Playbooks(t);
    this.playbookMetadata = new PlaybookMetadata(t);
    this.referenceMaterials = new ReferenceMaterials(t);
    this.assemblies = new Assemblies(t);
    this.templateColumns = new TemplateColumns(t);
    this.categoryConditions = new CategoryConditions(t);
    this.documentUploads = new DocumentUploads(t);
    this.models = new Models(t);
    this.messages = new Messages(t);
    this.embeddings = new Embeddings(t);
    this.notifications = new Notifications(t);
  }

  /** Any call of the interface, auth and retries included (what `ferry api` uses). */
  request<T = unknown>(spec: RequestSpec, opts: CallOptions<T> = {}): Promise<T> {
    return this.transport.json<T>(spec, opts);
  }

  requestStream(spec: RequestSpec, opts: CallOptions<StreamResponse> = {}): Promise<StreamResponse> {
    return this.transport.stream(spec, opts);
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}
