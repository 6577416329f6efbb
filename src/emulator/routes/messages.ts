// Assistant messages: list, send (JSON or server-sent events), handoff, get by id.
import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type { components } from '../../contract/openapi.js';
import { QUOTE_BYTES, replyText, serverSentEvents, summarize } from '../service/assistant-reply.js';
import type { CoreContext, CoreRoutePlugin } from '../core-context.js';
import { HttpError } from '../context.js';
import { renderDocument } from '../service/document-view.js';
import { QUOTABLE_EXTENSIONS } from '../service/file-kinds.js';
import type { AssistantRecord, StoredMessage } from '../state/assistants.js';
import type { ListedDocument } from '../state/documents.js';
import { ownerOf, visibleProject } from './access.js';
import { descQuery, objectSchema, pageWindow, type Paging, pagingQuery, uuid } from './schemas.js';

type MessageInput = components['schemas']['MessageInput'];

type ChatParams = { projectIdentifier: string; assistantIdentifier: string };

const uuidList = { type: ['array', 'null'], items: uuid } as const;
const chatParams = objectSchema({ projectIdentifier: { type: 'string' }, assistantIdentifier: uuid });
const messageBody = objectSchema(
  {
    text: { type: ['string', 'null'] },
    messageDocumentIdentifiers: uuidList,
    flowObjectIdentifiers: uuidList,
    modelIdentifier: uuid,
    stream: { type: ['boolean', 'null'] },
    messageType: { type: 'string' },
    thinkingEffort: { type: ['string', 'null'] },
    compactionEnabled: { type: ['boolean', 'null'] },
    compactionAcknowledged: { type: ['boolean', 'null'] },
    tools: { type: ['array', 'null'], items: { type: 'string' } },
    agentMode: { type: ['boolean', 'null'] },
  },
  ['text', 'modelIdentifier'],
);

const CREDITS_PER_REPLY = 0.01;
const CHARS_PER_TOKEN = 4;

export const messageRoutes: CoreRoutePlugin = (app, ctx) => {
  const { assistants, documents } = ctx.stores;

  ctx.events.on('projectDeleted', ({ projectIdentifier }: { projectIdentifier: string }) => assistants.removeProject(projectIdentifier));

  const chatOf = (req: FastifyRequest<{ Params: ChatParams }>): AssistantRecord => {
    const project = visibleProject(ctx, req, req.params.projectIdentifier);
    const assistant = assistants.findAssistant(project.tenant, project.objectIdentifier, req.params.assistantIdentifier);
    if (!assistant) throw new HttpError(404, 'Not Found', `Assistant ${req.params.assistantIdentifier} does not exist.`);
    return assistant;
  };

  const usableModel = (modelIdentifier: string) => {
    const entry = ctx.stores.models.find(modelIdentifier);
    if (!entry?.enabled) throw new HttpError(400, 'Bad Request', `Model ${modelIdentifier} is unknown or disabled.`);
  };

  const documentsOf = (assistant: AssistantRecord, ids: readonly string[]): ListedDocument[] =>
    ids.map((id) => {
      const document = documents.find(assistant.tenant, assistant.projectIdentifier, id);
      if (!document || document.isDirectory) throw new HttpError(400, 'Bad Request', `Document ${id} is not a document of this project.`);
      return document;
    });

  const view = (d: ListedDocument) => renderDocument(d, { url: (x) => ctx.documentUrl(x) });

  const assistantView = (assistant: AssistantRecord) => {
    const counts = assistants.messageCounts(assistant.objectIdentifier);
    const conversation = assistants.conversation(assistant.objectIdentifier);
    const tokens = conversation.reduce((sum, m) => sum + Math.ceil((m.text ?? '').length / CHARS_PER_TOKEN), 0);
    const referenced = assistant.documentIdentifiers.flatMap((id) => {
      const document = documents.find(assistant.tenant, assistant.projectIdentifier, id);
      return document ? [view(document)] : [];
    });
    return {
      objectIdentifier: assistant.objectIdentifier,
      name: assistant.name,
      description: assistant.description,
      documents: referenced,
      dateAdded: assistant.dateAdded,
      documentMetadata: [],
      estimatedTokenCount: tokens,
      lastContextTokens: tokens,
      assistantMessageCount: counts.assistant,
      userMessageCount: counts.user,
      totalCount: counts.assistant + counts.user,
      ...(assistant.lastContextModelIdentifier ? { lastContextModelIdentifier: assistant.lastContextModelIdentifier } : {}),
      compactionEnabled: false,
      credits: Math.round(counts.assistant * CREDITS_PER_REPLY * 100) / 100,
      resourceOwner: assistant.owner,
    };
  };

  app.get<{ Params: ChatParams; Querystring: Paging & { searchText?: string; sorting: string; desc: boolean } }>(
    '/projects/:projectIdentifier/assistants/:assistantIdentifier/messages',
    {
      schema: {
        params: chatParams,
        querystring: objectSchema({
          ...pagingQuery,
          ...descQuery,
          searchText: { type: 'string' },
          // Messages sort by the order they were added; the spec does not show other values.
          sorting: { type: 'string', enum: ['dateAdded'], default: 'dateAdded' },
        }),
      },
    },
    async (req) => {
      const assistant = chatOf(req);
      return assistants
        .listMessages({
          assistantIdentifier: assistant.objectIdentifier,
          ...(req.query.searchText ? { searchText: req.query.searchText } : {}),
          desc: req.query.desc,
          ...pageWindow(req.query),
        })
        .map((m) => m.body);
    },
  );

  app.post<{ Params: ChatParams; Body: MessageInput }>(
    '/projects/:projectIdentifier/assistants/:assistantIdentifier/messages',
    { schema: { params: chatParams, body: messageBody } },
    async (req, reply) => {
      ctx.requireWrite(req);
      const assistant = chatOf(req);
      const input = req.body;
      usableModel(input.modelIdentifier);
      const referenced = documentsOf(assistant, input.messageDocumentIdentifiers ?? []);
      const echo = echoed(input);
      const userMessage = message(ctx, req, { ...echo, text: input.text, isAssistant: false, documents: referenced.map(view) });
      assistants.addMessage(stored(assistant, userMessage));
      const allDocuments = [...new Set([...assistant.documentIdentifiers, ...referenced.map((d) => d.objectIdentifier)])];
      assistants.recordContext(assistant.objectIdentifier, input.modelIdentifier, allDocuments);

      const text = replyText(input.text, referenced);
      const replyId = ctx.newId();
      const citations = await Promise.all(referenced.map((d) => citation(ctx, d, replyId)));
      const answer = message(ctx, req, {
        ...echo,
        objectIdentifier: replyId,
        text,
        isAssistant: true,
        isStreaming: input.stream === true,
        resourceOwnerId: null,
        documents: referenced.map(view),
        messageCitations: citations,
      });
      assistants.addMessage(stored(assistant, answer));
      const complete = { ...answer, assistant: assistantView({ ...assistant, documentIdentifiers: allDocuments, lastContextModelIdentifier: input.modelIdentifier }) };
      // --stream-format: the spec shows `stream` but no event format; `json` answers as without it.
      if (input.stream !== true || ctx.modes.streamFormat === 'json') return complete;
      return reply
        .type('text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache')
        .send(Readable.from(serverSentEvents(text, ctx.modes.streamFormat === 'no-final' ? undefined : complete)));
    },
  );

  app.post<{ Params: ChatParams; Body: { modelIdentifier?: string | null } | undefined }>(
    '/projects/:projectIdentifier/assistants/:assistantIdentifier/messages/handoff',
    { schema: { params: chatParams, body: { type: ['object', 'null'], properties: { modelIdentifier: { type: ['string', 'null'], format: 'uuid' } } } } },
    async (req) => {
      ctx.requireWrite(req);
      const original = chatOf(req);
      if (req.body?.modelIdentifier) usableModel(req.body.modelIdentifier);
      // Every Message carries a model: the requested one, else the chat's last, else the catalogue's first enabled.
      const modelIdentifier =
        req.body?.modelIdentifier ??
        original.lastContextModelIdentifier ??
        ctx.stores.models.all().find((entry) => entry.enabled)?.model.objectIdentifier ??
        null;
      const summary = handoffSummary(original, assistants.conversation(original.objectIdentifier));
      const chat: AssistantRecord = {
        ...original,
        objectIdentifier: ctx.newId(),
        name: `${original.name} (continued)`,
        description: `Continued from chat ${original.objectIdentifier}`,
        dateAdded: ctx.now(),
        owner: ownerOf(ctx, req),
        linkedFrom: original.objectIdentifier,
        lastContextModelIdentifier: modelIdentifier,
      };
      assistants.addAssistant(chat);
      const seeded = message(ctx, req, {
        text: summary,
        isAssistant: true,
        resourceOwnerId: null,
        messageType: 'standard',
        ...(modelIdentifier ? { modelIdentifier } : {}),
      });
      assistants.addMessage(stored(chat, seeded));
      return { newChatObjectIdentifier: chat.objectIdentifier, summary };
    },
  );

  app.get<{ Params: ChatParams & { objectIdentifier: string } }>(
    '/projects/:projectIdentifier/assistants/:assistantIdentifier/messages/:objectIdentifier',
    { schema: { params: objectSchema({ projectIdentifier: { type: 'string' }, assistantIdentifier: uuid, objectIdentifier: uuid }) } },
    async (req) => {
      const assistant = chatOf(req);
      const found = assistants.findMessage(assistant.objectIdentifier, req.params.objectIdentifier);
      if (!found) throw new HttpError(404, 'Not Found', `Message ${req.params.objectIdentifier} does not exist.`);
      return found.body;
    },
  );
};

/** The input fields a Message echoes back. */
function echoed(input: MessageInput): Record<string, unknown> {
  return {
    messageDocumentIdentifiers: input.messageDocumentIdentifiers ?? null,
    flowObjectIdentifiers: input.flowObjectIdentifiers ?? null,
    modelIdentifier: input.modelIdentifier,
    stream: input.stream ?? null,
    messageType: input.messageType ?? 'standard',
    thinkingEffort: input.thinkingEffort ?? null,
    compactionEnabled: input.compactionEnabled ?? null,
    compactionAcknowledged: input.compactionAcknowledged ?? null,
    tools: input.tools ?? null,
    agentMode: input.agentMode ?? null,
  };
}

function message(ctx: CoreContext, req: FastifyRequest, fields: Record<string, unknown>): Record<string, unknown> {
  const caller = ctx.caller(req);
  return {
    objectIdentifier: ctx.newId(),
    dateAdded: ctx.now(),
    messageResponseTypeId: null,
    resourceOwnerId: caller.userId,
    isStreaming: false,
    webSearchEnabled: false,
    resourceOwner: ownerOf(ctx, req),
    documents: [],
    messageCitations: [],
    contentBlocks: [],
    sessionFiles: [],
    ...fields,
  };
}

function stored(assistant: AssistantRecord, body: Record<string, unknown>): StoredMessage {
  return {
    objectIdentifier: body.objectIdentifier as string,
    assistantIdentifier: assistant.objectIdentifier,
    dateAdded: body.dateAdded as string,
    isAssistant: body.isAssistant as boolean,
    text: (body.text as string | null) ?? null,
    body,
  };
}

async function citation(ctx: CoreContext, document: ListedDocument, messageObjectIdentifier: string): Promise<Record<string, unknown>> {
  const quote = await quoteOf(ctx, document);
  return {
    objectIdentifier: ctx.newId(),
    messageObjectIdentifier,
    documentObjectIdentifier: document.objectIdentifier,
    quote,
    paragraphPageNumber: 1,
    startIndex: 0,
    endIndex: quote.length,
    title: document.name,
    url: ctx.documentUrl({ ...document, blobKey: document.blobKey ?? '' }),
  };
}

/** The first bytes of a plain-text document; other kinds are not quoted. */
async function quoteOf(ctx: CoreContext, document: ListedDocument): Promise<string> {
  if (!document.blobKey || !QUOTABLE_EXTENSIONS.has(document.extension ?? '')) return '';
  const content = ctx.blobs.get(document.blobKey);
  if (!content) return '';
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of content as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    bytes += chunk.length;
    if (bytes >= QUOTE_BYTES) break; // leaving the loop closes the stream
  }
  return Buffer.concat(chunks).subarray(0, QUOTE_BYTES).toString('utf8').replace(/\uFFFD+$/, '').trim();
}

function handoffSummary(assistant: AssistantRecord, conversation: StoredMessage[]): string {
  const userMessages = conversation.filter((m) => !m.isAssistant);
  const last = userMessages.at(-1);
  return [
    `Handoff from "${assistant.name}": ${conversation.length} message(s), ${userMessages.length} from the user.`,
    last ? `Last question: "${summarize(last.text)}".` : 'No question was asked yet.',
    `Documents carried over: ${assistant.documentIdentifiers.length}.`,
  ].join(' ');
}
