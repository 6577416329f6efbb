import { Resource, pagedGet, seg } from './resource.js';
import type { ListOptions, PagedList } from '../paging.js';
import type { CallOptions, Transport } from '../transport.js';
import { parseSse, type SseEvent } from '../sse.js';
import { FerryError } from '../errors.js';
import type { HandoffRequest, HandoffResult, Message, MessageInput, Query } from '../types.js';

type ListQuery = Omit<Query<'listMessages'>, 'pageNumber' | 'pageSize'>;
type SendInput = Omit<MessageInput, 'stream'>;

/** A chat with one assistant of a project. */
export interface ChatPath {
  projectIdentifier: string;
  assistantIdentifier: string;
}

export class Messages extends Resource {
  private prefix(c: ChatPath): string {
    return `/projects/${seg(c.projectIdentifier)}/assistants/${seg(c.assistantIdentifier)}/messages`;
  }
  list(chat: ChatPath, query: ListQuery = {}, opts: ListOptions = {}): PagedList<Message> {
    return pagedGet(this.t, this.prefix(chat), query, opts);
  }
  get(chat: ChatPath, objectIdentifier: string, opts: CallOptions = {}): Promise<Message> {
    return this.t.json({ method: 'GET', path: `${this.prefix(chat)}/${seg(objectIdentifier)}` }, opts);
  }
  /** Sends a user message and resolves to the assistant's reply as one payload. */
  send(chat: ChatPath, input: SendInput, opts: CallOptions<Message> = {}): Promise<Message> {
    return this.t.json({ method: 'POST', path: this.prefix(chat), json: { ...input, stream: false } }, opts);
  }
  /** Sends a user message with `stream: true`: iterate the server-sent events, then read `finalMessage()`. */
  stream(chat: ChatPath, input: SendInput, opts: CallOptions = {}): MessageStream {
    return new MessageStream(this.t, this.prefix(chat), input, opts);
  }
  /** Summarizes the chat into a new one seeded with the summary. */
  handoff(chat: ChatPath, input: HandoffRequest = {}, opts: CallOptions<HandoffResult> = {}): Promise<HandoffResult> {
    return this.t.json({ method: 'POST', path: `${this.prefix(chat)}/handoff`, json: input }, opts);
  }
}

/**
 * The events of a streamed reply, in order. The spec does not show the event format, so the final
 * Message is recognised by shape (the last event whose data is a JSON object with `isAssistant`);
 * a server that answers JSON despite `stream: true` yields no events and its Message is final; a
 * stream that carries no Message at all is answered by reading the reply back from the chat.
 */
export class MessageStream implements AsyncIterable<SseEvent> {
  private final: Message | undefined;
  private started = false;
  private sentAt = 0;
  private done = false;

  constructor(
    private readonly t: Transport,
    private readonly path: string,
    private readonly input: SendInput,
    private readonly opts: CallOptions,
  ) {}

  async *[Symbol.asyncIterator](): AsyncIterator<SseEvent> {
    if (this.started) throw new FerryError('a message stream can be read only once');
    this.started = true;
    this.sentAt = Date.now();
    const res = await this.t.stream({ method: 'POST', path: this.path, json: { ...this.input, stream: true } }, this.opts);
    const type = String(res.headers['content-type'] ?? '');
    if (!type.includes('text/event-stream')) {
      this.final = JSON.parse(await res.body.setEncoding('utf8').toArray().then((parts) => parts.join(''))) as Message;
      this.done = true;
      return;
    }
    for await (const event of parseSse(res.body)) {
      const message = asMessage(event.data);
      if (message) this.final = message;
      yield event;
    }
    this.done = true;
  }

  /** The complete assistant Message, reading the rest of the stream first if needed. */
  async finalMessage(): Promise<Message> {
    if (!this.started) for await (const _ of this) { /* drain */ }
    if (!this.done) throw new FerryError('finalMessage() was called before the stream was read to its end');
    this.final ??= await this.readBack();
    if (!this.final) throw new FerryError('the message stream ended without a complete Message, and the chat holds no reply sent since');
    return this.final;
  }

  /** The newest assistant message of the chat dated since the request (with slack for the service's clock). */
  private async readBack(): Promise<Message | undefined> {
    const since = this.sentAt - CLOCK_SLACK_MS;
    let newest: Message | undefined;
    for await (const m of pagedGet<Message>(this.t, this.path, {}, this.opts.signal ? { signal: this.opts.signal } : {})) {
      const at = Date.parse(m.dateAdded ?? '');
      if (!m.isAssistant || !(at >= since)) continue;
      if (!newest || at >= Date.parse(newest.dateAdded ?? '')) newest = m;
    }
    return newest;
  }
}

/** How far the service's clock may run behind ours when a reply is read back. */
const CLOCK_SLACK_MS = 60_000;

function asMessage(data: string): Message | undefined {
  if (!data.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(data) as Partial<Message>;
    return typeof parsed.isAssistant === 'boolean' ? (parsed as Message) : undefined;
  } catch {
    return undefined;
  }
}
