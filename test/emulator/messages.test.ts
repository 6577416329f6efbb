import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { Client, clientFor, expectNoContractViolations, startTestEmulator } from './helpers.js';

let handle: EmulatorHandle;
let client: Client;
let project: string;
let assistant: string;
let chatPath: string;
let model: string;
let disabledModel: string;
const documents: Record<string, string> = {};

beforeAll(async () => {
  handle = await startTestEmulator();
  client = await clientFor(handle);
  ({ projectIdentifier: project, assistantIdentifier: assistant } = handle.tenants[0]!.assistants[0]!);
  chatPath = `/projects/${project}/assistants/${assistant}/messages`;
  const models = (await new Client(handle.settingsUrl, client.bearer).get('/models', { includeDisabled: true })).body;
  model = models.find((m: { name: string }) => m.name === 'Ferry Mini').objectIdentifier;
  disabledModel = models.find((m: { name: string }) => m.name === 'Ferry Legacy').objectIdentifier;
  const uploadIdentifier = randomUUID();
  documents.notes = (await client.upload(project, 'notes.md', '# Quarterly notes\nRevenue grew by 12 percent.', { uploadIdentifier })).body.objectIdentifier;
  documents.scan = (await client.upload(project, 'scan.png', 'PNG bytes', { uploadIdentifier })).body.objectIdentifier;
  await client.processed(project, uploadIdentifier);
});
afterAll(() => handle.close());
afterEach(() => expectNoContractViolations(handle));

interface ServerSentEvent {
  event: string;
  data: string;
}

/** Parses raw `text/event-stream` text (events separated by a blank line). */
function parseEvents(text: string): ServerSentEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice('event: '.length) ?? 'message';
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice('data: '.length))
        .join('\n');
      return { event, data };
    });
}

describe('messages', () => {
  it('answers a deterministic reply that cites the referenced documents', async () => {
    const res = await client.post(chatPath, {
      text: 'What   does the report say\nabout revenue?',
      modelIdentifier: model,
      messageDocumentIdentifiers: [documents.notes, documents.scan],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      isAssistant: true,
      isStreaming: false,
      modelIdentifier: model,
      messageType: 'standard',
      text: 'You asked: "What does the report say about revenue?".\nI consulted 2 document(s): [1] notes.md; [2] scan.png.',
    });
    expect(res.body.documents.map((d: { name: string }) => d.name)).toEqual(['notes.md', 'scan.png']);
    const [notes, scan] = res.body.messageCitations;
    expect(notes).toMatchObject({ documentObjectIdentifier: documents.notes, quote: '# Quarterly notes\nRevenue grew by 12 percent.', title: 'notes.md', messageObjectIdentifier: res.body.objectIdentifier });
    expect(scan).toMatchObject({ documentObjectIdentifier: documents.scan, quote: '' });
    expect(res.body.assistant).toMatchObject({ objectIdentifier: assistant, userMessageCount: 1, assistantMessageCount: 1, totalCount: 2, lastContextModelIdentifier: model });
    const fetched = await client.get(`${chatPath}/${res.body.objectIdentifier}`);
    expect(fetched.body.text).toBe(res.body.text);
  });

  it('streams delta events, then the whole message, then done', async () => {
    const res = await request(`${handle.baseUrl}${chatPath}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${client.bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Stream a long enough answer please', modelIdentifier: model, stream: true, messageDocumentIdentifiers: [documents.notes] }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = parseEvents(await res.body.text());
    const deltas = events.filter((e) => e.event === 'delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(events.map((e) => e.event)).toEqual([...deltas.map(() => 'delta'), 'message', 'done']);
    const message = JSON.parse(events.at(-2)!.data);
    expect(deltas.map((d) => JSON.parse(d.data).text).join('')).toBe(message.text);
    expect(message).toMatchObject({ isAssistant: true, isStreaming: true, stream: true });
    expect(events.at(-1)!.data).toBe('[DONE]');
  });

  it('stores both sides of the conversation and lists them newest first', async () => {
    const listed = await client.get(chatPath);
    expect(listed.status).toBe(200);
    expect(listed.body.length).toBe(4);
    expect(listed.body.map((m: { isAssistant: boolean }) => m.isAssistant)).toEqual([true, false, true, false]);
    expect(listed.body[1].resourceOwnerId).toBe(handle.tenants[0]!.clientId);
    const oldestFirst = await client.get(chatPath, { desc: false, pageSize: 1 });
    expect(oldestFirst.body[0].text).toBe('What   does the report say\nabout revenue?');
    // The reply echoes the question, so both sides match.
    const found = (await client.get(chatPath, { searchText: 'STREAM A' })).body;
    expect(found.map((m: { isAssistant: boolean }) => m.isAssistant)).toEqual([true, false]);
  });

  it('answers 400 for unknown or disabled models and foreign documents, 404 for unknown chats', async () => {
    expect((await client.post(chatPath, { text: 'x', modelIdentifier: disabledModel })).status).toBe(400);
    expect((await client.post(chatPath, { text: 'x', modelIdentifier: randomUUID() })).status).toBe(400);
    expect((await client.post(chatPath, { text: 'x', modelIdentifier: model, messageDocumentIdentifiers: [randomUUID()] })).status).toBe(400);
    expect((await client.post(chatPath, { text: 'x' })).status).toBe(400);
    expect((await client.post(`/projects/${project}/assistants/${randomUUID()}/messages`, { text: 'x', modelIdentifier: model })).status).toBe(404);
    expect((await client.get(`/projects/${project}/assistants/not-a-uuid/messages`)).status).toBe(400);
    expect((await client.get(`${chatPath}/${randomUUID()}`)).status).toBe(404);
    const fabrikam = await clientFor(handle, 1);
    expect((await fabrikam.get(chatPath)).status).toBe(404);
  });

  it('hands off to a new chat seeded with a summary', async () => {
    const res = await client.post(`${chatPath}/handoff`, { modelIdentifier: model });
    expect(res.status).toBe(200);
    expect(res.body.summary).toContain('4 message(s)');
    expect(res.body.summary).toContain('Documents carried over: 2');
    const newChat = `/projects/${project}/assistants/${res.body.newChatObjectIdentifier}/messages`;
    const seeded = await client.get(newChat);
    expect(seeded.body).toHaveLength(1);
    expect(seeded.body[0]).toMatchObject({ isAssistant: true, text: res.body.summary });
    const reply = await client.post(newChat, { text: 'continue', modelIdentifier: model });
    expect(reply.body.assistant.documents.map((d: { name: string }) => d.name)).toEqual(['notes.md', 'scan.png']);
    expect((await client.get(`/projects/${project}/analytics`)).body.assistantCount).toBe(2);
    expect((await client.post(`${chatPath}/handoff`, { modelIdentifier: disabledModel })).status).toBe(400);
  });
});
