// Tenants, their OAuth clients and their credit balance.
import type Database from 'better-sqlite3';
import { applyMigrations } from './database.js';

export interface ClientRecord {
  clientId: string;
  clientSecret: string;
  tenant: string;
  canWrite: boolean;
  userName: string;
  userEmail: string;
}

interface ClientRow {
  client_id: string;
  client_secret: string;
  tenant: string;
  can_write: number;
  user_name: string;
  user_email: string;
}

const MIGRATIONS = [
  `CREATE TABLE tenants (name TEXT PRIMARY KEY, region TEXT NOT NULL, credits REAL NOT NULL);
   CREATE TABLE clients (
     client_id TEXT PRIMARY KEY, client_secret TEXT NOT NULL, tenant TEXT NOT NULL REFERENCES tenants(name),
     can_write INTEGER NOT NULL, user_name TEXT NOT NULL, user_email TEXT NOT NULL);`,
];

export class TenantStore {
  private readonly insertTenant;
  private readonly insertClient;
  private readonly selectClient;
  private readonly selectClientsOfTenant;
  private readonly selectCredits;
  private readonly updateCredits;
  private readonly debitCredits;
  private readonly countTenants;

  constructor(db: Database.Database) {
    applyMigrations(db, 'tenants', MIGRATIONS);
    this.insertTenant = db.prepare('INSERT INTO tenants (name, region, credits) VALUES (?, ?, ?)');
    this.insertClient = db.prepare(
      'INSERT INTO clients (client_id, client_secret, tenant, can_write, user_name, user_email) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.selectClient = db.prepare<[string], ClientRow>('SELECT * FROM clients WHERE client_id = ?');
    this.selectClientsOfTenant = db.prepare<[string], ClientRow>('SELECT * FROM clients WHERE tenant = ? ORDER BY client_id');
    this.selectCredits = db.prepare<[string], number>('SELECT credits FROM tenants WHERE name = ?').pluck();
    this.updateCredits = db.prepare('UPDATE tenants SET credits = ? WHERE name = ?');
    this.debitCredits = db.prepare('UPDATE tenants SET credits = credits - ? WHERE name = ?');
    this.countTenants = db.prepare<[], number>('SELECT count(*) FROM tenants').pluck();
  }

  isEmpty(): boolean {
    return this.countTenants.get() === 0;
  }

  addTenant(name: string, region: string, credits: number): void {
    this.insertTenant.run(name, region, credits);
  }

  addClient(client: ClientRecord): void {
    this.insertClient.run(client.clientId, client.clientSecret, client.tenant, client.canWrite ? 1 : 0, client.userName, client.userEmail);
  }

  client(clientId: string): ClientRecord | undefined {
    const row = this.selectClient.get(clientId);
    return row && toClient(row);
  }

  clientsOf(tenant: string): ClientRecord[] {
    return this.selectClientsOfTenant.all(tenant).map(toClient);
  }

  credits(tenant: string): number {
    const credits = this.selectCredits.get(tenant);
    if (credits === undefined) throw new Error(`Unknown tenant: ${tenant}`);
    return credits;
  }

  setCredits(tenant: string, credits: number): void {
    if (this.updateCredits.run(credits, tenant).changes === 0) throw new Error(`Unknown tenant: ${tenant}`);
  }

  debit(tenant: string, amount: number): void {
    this.debitCredits.run(amount, tenant);
  }
}

function toClient(row: ClientRow): ClientRecord {
  return {
    clientId: row.client_id,
    clientSecret: row.client_secret,
    tenant: row.tenant,
    canWrite: row.can_write === 1,
    userName: row.user_name,
    userEmail: row.user_email,
  };
}
