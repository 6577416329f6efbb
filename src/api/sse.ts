// Server-sent events from a response body, as an async iterator.
// eventsource-parser does the framing, including events and UTF-8 characters split across chunks.
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface SseEvent {
  /** The `event:` field; 'message' when the server sent none. */
  event: string;
  data: string;
  id: string | undefined;
}

export async function* parseSse(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const queue: SseEvent[] = [];
  const parser = createParser({
    onEvent(msg: EventSourceMessage) {
      queue.push({ event: msg.event ?? 'message', data: msg.data, id: msg.id });
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    while (queue.length > 0) yield queue.shift() as SseEvent;
  }
  parser.feed(decoder.decode());
  // A final event without its blank line is incomplete by the SSE rules and is dropped by the parser.
  while (queue.length > 0) yield queue.shift() as SseEvent;
}
