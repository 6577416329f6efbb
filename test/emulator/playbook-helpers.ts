// Test plumbing for the playbook parts: multipart calls, zips built with archiver, and waiting
// (bounded) for a notification.
import { setTimeout as sleep } from 'node:timers/promises';
import { zipOf } from '../helpers/archives.js';
import { FormData, fetch } from 'undici';
import { expect } from 'vitest';
import type { Client, Response } from './helpers.js';

export type FormPart = { name: string; value: string } | { name: string; file: string | Uint8Array; fileName: string };

/** Sends a multipart/form-data request with the parts in the given order. */
export async function sendForm(client: Client, method: 'POST' | 'PUT', path: string, parts: FormPart[]): Promise<Response<any>> {
  const form = new FormData();
  for (const part of parts) {
    if ('value' in part) form.append(part.name, part.value);
    else form.append(part.name, new Blob([typeof part.file === 'string' ? Buffer.from(part.file) : part.file]), part.fileName);
  }
  const res = await fetch(`${client.baseUrl}${path}`, {
    method,
    headers: client.bearer ? { authorization: `Bearer ${client.bearer}` } : {},
    body: form,
  });
  const text = await res.text();
  const json = res.headers.get('content-type')?.includes('json') && text;
  return { status: res.status, headers: Object.fromEntries(res.headers), body: json ? JSON.parse(text) : text, text };
}

/** A zip of the given entries (name -> content). */
export function zip(entries: Record<string, string | Buffer>): Promise<Buffer> {
  return zipOf(Object.entries(entries).map(([name, data]) => ({ name, data })));
}

/** Polls GET /notifications (bounded by count) until one matches. */
export async function waitForNotification(client: Client, matches: (notification: any) => boolean): Promise<any> {
  for (let attempt = 0; attempt < 1000; attempt++) {
    const res = await client.get('/notifications', { pageSize: 1000 });
    expect(res.status).toBe(200);
    const found = res.body.find(matches);
    if (found) return found;
    await sleep(5);
  }
  throw new Error('No matching notification after 1000 polls');
}

/** A PDF with `pages` page objects (what the emulator counts). */
export function pdf(pages: number): string {
  const objects = Array.from({ length: pages }, (_, i) => `${i + 3} 0 obj << /Type /Page /Parent 2 0 R >> endobj`).join('\n');
  return `%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Count ${pages} >> endobj\n${objects}\n%%EOF\n`;
}
