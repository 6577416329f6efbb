// Fills a stopped emulator's database with the project a mirror of ROOT would have left: every
// folder and file of the tree as a document, each row a copy of the rows a real `ferry mirror` of
// the tree's first folder wrote (same owner, processing outcome, metadata keys), with its own id,
// name, parent, order, identity (path, size, mtime from the file; sha256 of the content, which
// every file of the bench's tree shares) and blob: a copy of the template's content under the
// document's own key, as an upload leaves it, so that pulls and migrations read a million files
// as they would after real uploads, not one file a million times. Argv: DATA PROJECT ROOT.
// Uploading a million files through the emulator would take the better part of an hour; this is
// what the scale bench's largest size stands on (bench/scale.mjs).
import { randomUUID } from 'node:crypto';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fg from 'fast-glob';

const [data, project, root] = process.argv.slice(2);
const db = new Database(join(data, 'state.sqlite'));
const rows = db.prepare('SELECT * FROM documents WHERE project_identifier = ? ORDER BY seq').all(project);
const folderTemplate = rows.find((r) => r.is_directory === 1);
const fileTemplate = rows.find((r) => r.is_directory === 0);
if (!folderTemplate || !fileTemplate) throw new Error('seed-scale: the template mirror left no folder or no file');
const template = JSON.parse(fileTemplate.metadata);
const sha256 = template.find((m) => m.key === 'ferry.sha256').value;
// What the template wrote is kept as it is; the rest of the tree is added.
const folders = new Map(rows.filter((r) => r.is_directory === 1).map((r) => [pathOf(r, rows), r.object_identifier]));
const present = new Set(rows.filter((r) => r.is_directory === 0).map((r) => JSON.parse(r.metadata).find((m) => m.key === 'ferry.path').value));
const columns = Object.keys(fileTemplate);
const insert = db.prepare(`INSERT INTO documents (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`);
let seq = db.prepare('SELECT MAX(seq) FROM documents').pluck().get();
let clock = Date.parse(fileTemplate.date_added);
const stamp = () => {
  seq++;
  clock++;
  return { seq, date_added: new Date(clock).toISOString() };
};

function pathOf(row, all) {
  const parts = [];
  for (let r = row; r; r = all.find((p) => p.object_identifier === r.parent_identifier)) parts.unshift(r.name);
  return parts.join('/');
}

function folder(path) {
  const known = folders.get(path);
  if (known) return known;
  const cut = path.lastIndexOf('/');
  const parent = cut < 0 ? null : folder(path.slice(0, cut));
  const id = randomUUID();
  insert.run({ ...folderTemplate, ...stamp(), object_identifier: id, upload_identifier: id, parent_identifier: parent, name: path.slice(cut + 1) });
  folders.set(path, id);
  return id;
}

let added = 0;
const batch = [];
const flush = db.transaction((entries) => {
  for (const { path, stats } of entries) {
    const cut = path.lastIndexOf('/');
    const metadata = [
      ['ferry.path', path],
      ['ferry.size', String(stats.size)],
      ['ferry.sha256', sha256],
      ['ferry.mtime', String(Math.trunc(stats.mtimeMs))],
    ].map(([key, value]) => ({ objectIdentifier: randomUUID(), key, value }));
    const id = randomUUID();
    const blobKey = `documents/${id}`;
    copyFileSync(join(data, 'blobs', fileTemplate.blob_key), join(data, 'blobs', blobKey));
    insert.run({ ...fileTemplate, ...stamp(), object_identifier: id, parent_identifier: cut < 0 ? null : folder(path.slice(0, cut)), name: path.slice(cut + 1), size: stats.size, metadata: JSON.stringify(metadata), blob_key: blobKey });
    added++;
  }
});
for await (const entry of fg.stream('**', { cwd: root, onlyFiles: true, stats: true, objectMode: true })) {
  if (present.has(entry.path)) continue;
  batch.push(entry);
  if (batch.length === 10_000) flush(batch.splice(0));
}
flush(batch.splice(0));
db.close();
console.error(`seed-scale: ${added} documents added beside the template's ${present.size}`);
