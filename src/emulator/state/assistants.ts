// Assistants (chats) of projects and their messages.
import type Database from 'better-sqlite3';
import { applyMigrations } from './database.js';
import { StatementCache } from './list-query.js';
import type { Owner } from './projects.js';

export interface AssistantRecord {
  objectIdentifier: string;
  tenant: string;
  projectIdentifier: string;
  name: string;
  description: string;
  dateAdded: string;
  owner: Owner;
  /** The chat this one was handed off from. */
  linkedFrom: string | null;
  /** Documents the chat carries as references (handoff keeps them). */
  documentIdentifiers: string[];
  lastContextModelIdentifier: string | null;
}

export interface StoredMessage {
  objectIdentifier: string;
  assistantIdentifier: string;
  dateAdded: string;
  isAssistant: boolean;
  text: string | null;
  /** The Message as answered when it was created. */
  body: Record<string, unknown>;
}

export interface MessageQuery {
  assistantIdentifier: string;
  searchText?: string;
  desc: boolean;
  limit: number;
  offset: number;
}

interface AssistantRow {
  object_identifier: string;
  tenant: string;
  project_identifier: string;
  name: string;
  description: string;
  date_added: string;
  owner_id: string;
  owner_name: string;
  owner_email: string;
  linked_from: string | null;
  document_identifiers: string;
  last_context_model_identifier: string | null;
}

interface MessageRow {
  object_identifier: string;
  assistant_identifier: string;
  date_added: string;
  is_assistant: number;
  text: string | null;
  body: string;
}

const MIGRATIONS = [
  `CREATE TABLE assistants (
     object_identifier TEXT PRIMARY KEY, tenant TEXT NOT NULL, project_identifier TEXT NOT NULL, name TEXT NOT NULL,
     description TEXT NOT NULL, date_added TEXT NOT NULL, owner_id TEXT NOT NULL, owner_name TEXT NOT NULL,
     owner_email TEXT NOT NULL, linked_from TEXT, document_identifiers TEXT NOT NULL, last_context_model_identifier TEXT);
   CREATE INDEX assistants_by_project ON assistants (project_identifier);
   CREATE TABLE messages (
     object_identifier TEXT PRIMARY KEY, assistant_identifier TEXT NOT NULL REFERENCES assistants(object_identifier) ON DELETE CASCADE,
     seq INTEGER NOT NULL, date_added TEXT NOT NULL, is_assistant INTEGER NOT NULL, text TEXT, body TEXT NOT NULL);
   CREATE INDEX messages_by_assistant ON messages (assistant_identifier, seq);
   CREATE UNIQUE INDEX messages_by_seq ON messages (seq);`,
];

export class AssistantStore {
  private readonly insertAssistant;
  private readonly selectAssistant;
  private readonly updateAssistantContext;
  private readonly countOfProject;
  private readonly deleteOfProject;
  private readonly insertMessage;
  private readonly selectMessage;
  private readonly selectConversation;
  private readonly selectCounts;
  private readonly lists: StatementCache;

  constructor(db: Database.Database) {
    applyMigrations(db, 'assistants', MIGRATIONS);
    this.lists = new StatementCache(db);
    this.insertAssistant = db.prepare(
      `INSERT INTO assistants VALUES (@objectIdentifier, @tenant, @projectIdentifier, @name, @description, @dateAdded,
         @ownerId, @ownerName, @ownerEmail, @linkedFrom, @documentIdentifiers, @lastContextModelIdentifier)`,
    );
    this.selectAssistant = db.prepare<[string, string, string], AssistantRow>(
      'SELECT * FROM assistants WHERE tenant = ? AND project_identifier = ? AND object_identifier = ?',
    );
    this.updateAssistantContext = db.prepare('UPDATE assistants SET last_context_model_identifier = ?, document_identifiers = ? WHERE object_identifier = ?');
    this.countOfProject = db.prepare<[string], number>('SELECT count(*) FROM assistants WHERE project_identifier = ?').pluck();
    this.deleteOfProject = db.prepare('DELETE FROM assistants WHERE project_identifier = ?');
    this.insertMessage = db.prepare(
      `INSERT INTO messages VALUES (@objectIdentifier, @assistantIdentifier, (SELECT coalesce(max(seq), 0) + 1 FROM messages),
         @dateAdded, @isAssistant, @text, @body)`,
    );
    this.selectMessage = db.prepare<[string, string], MessageRow>('SELECT * FROM messages WHERE assistant_identifier = ? AND object_identifier = ?');
    this.selectConversation = db.prepare<[string], MessageRow>('SELECT * FROM messages WHERE assistant_identifier = ? ORDER BY seq');
    this.selectCounts = db.prepare<[string], { user: number; assistant: number }>(
      'SELECT coalesce(sum(is_assistant = 0), 0) AS user, coalesce(sum(is_assistant = 1), 0) AS assistant FROM messages WHERE assistant_identifier = ?',
    );
  }

  addAssistant(a: AssistantRecord): void {
    this.insertAssistant.run({
      objectIdentifier: a.objectIdentifier,
      tenant: a.tenant,
      projectIdentifier: a.projectIdentifier,
      name: a.name,
      description: a.description,
      dateAdded: a.dateAdded,
      ownerId: a.owner.id,
      ownerName: a.owner.name,
      ownerEmail: a.owner.email,
      linkedFrom: a.linkedFrom,
      documentIdentifiers: JSON.stringify(a.documentIdentifiers),
      lastContextModelIdentifier: a.lastContextModelIdentifier,
    });
  }

  findAssistant(tenant: string, projectIdentifier: string, objectIdentifier: string): AssistantRecord | undefined {
    const row = this.selectAssistant.get(tenant, projectIdentifier, objectIdentifier);
    return row && toAssistant(row);
  }

  /** Remembers the model last used and the documents the chat now refers to. */
  recordContext(assistantIdentifier: string, modelIdentifier: string, documentIdentifiers: string[]): void {
    this.updateAssistantContext.run(modelIdentifier, JSON.stringify(documentIdentifiers), assistantIdentifier);
  }

  assistantCount(projectIdentifier: string): number {
    return this.countOfProject.get(projectIdentifier) ?? 0;
  }

  removeProject(projectIdentifier: string): void {
    this.deleteOfProject.run(projectIdentifier);
  }

  addMessage(message: StoredMessage): void {
    this.insertMessage.run({ ...message, isAssistant: message.isAssistant ? 1 : 0, body: JSON.stringify(message.body) });
  }

  findMessage(assistantIdentifier: string, objectIdentifier: string): StoredMessage | undefined {
    const row = this.selectMessage.get(assistantIdentifier, objectIdentifier);
    return row && toMessage(row);
  }

  conversation(assistantIdentifier: string): StoredMessage[] {
    return this.selectConversation.all(assistantIdentifier).map(toMessage);
  }

  messageCounts(assistantIdentifier: string): { user: number; assistant: number } {
    return this.selectCounts.get(assistantIdentifier) ?? { user: 0, assistant: 0 };
  }

  listMessages(query: MessageQuery): StoredMessage[] {
    const search = query.searchText ? 'AND search_match(text, @searchText)' : '';
    const direction = query.desc ? 'DESC' : 'ASC';
    const rows = this.lists
      .get(`SELECT * FROM messages WHERE assistant_identifier = @assistantIdentifier ${search} ORDER BY seq ${direction} LIMIT @limit OFFSET @offset`)
      .all({
        assistantIdentifier: query.assistantIdentifier,
        limit: query.limit,
        offset: query.offset,
        ...(query.searchText ? { searchText: query.searchText } : {}),
      }) as MessageRow[];
    return rows.map(toMessage);
  }
}

function toAssistant(r: AssistantRow): AssistantRecord {
  return {
    objectIdentifier: r.object_identifier,
    tenant: r.tenant,
    projectIdentifier: r.project_identifier,
    name: r.name,
    description: r.description,
    dateAdded: r.date_added,
    owner: { id: r.owner_id, name: r.owner_name, email: r.owner_email },
    linkedFrom: r.linked_from,
    documentIdentifiers: JSON.parse(r.document_identifiers) as string[],
    lastContextModelIdentifier: r.last_context_model_identifier,
  };
}

function toMessage(r: MessageRow): StoredMessage {
  return {
    objectIdentifier: r.object_identifier,
    assistantIdentifier: r.assistant_identifier,
    dateAdded: r.date_added,
    isAssistant: r.is_assistant === 1,
    text: r.text,
    body: JSON.parse(r.body) as Record<string, unknown>,
  };
}
