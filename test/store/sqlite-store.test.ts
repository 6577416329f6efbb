import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { SqliteCheckpointStore } from '../../src/store/index.js';

let dir: string;
let path: string;
let store: SqliteCheckpointStore;
const JOB = 'mirror:proj:/src';

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-store-'));
  path = join(dir, 'nested', 'state.sqlite');
  store = new SqliteCheckpointStore(path);
});
afterEach(async () => {
  store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('checkpoint store', () => {
  it('records runs with their parameters, counts and end', () => {
    const run = store.startRun({ job: 'mirror', jobKey: JOB, params: { source: '/src', project: 'p' }, uploadId: 'u1' });
    expect(run).toMatchObject({ status: 'running', uploadId: 'u1', counts: { discovered: 0 }, endedAt: null });
    store.updateRun(run.id, { counts: { ...run.counts, discovered: 5 }, bytes: 10 });
    const done = store.finishRun(run.id, 'succeeded', { errors: ['x'] });
    expect(done).toMatchObject({ status: 'succeeded', bytes: 10, errors: ['x'], counts: { discovered: 5 } });
    expect(done.endedAt).not.toBeNull();
    expect(store.listRuns({ job: 'mirror' }).map((r) => r.id)).toEqual([run.id]);
  });

  it('keeps an intent across a reopen even though results are batched', () => {
    const run = store.startRun({ job: 'mirror', jobKey: JOB, params: {}, uploadId: 'u1' });
    store.recordIntent(JOB, 'a.txt', { size: 3, mtimeMs: 1, sha256: null, uploadId: 'u1', parentId: null, runId: run.id });
    store.recordIntent(JOB, 'b.txt', { size: 4, mtimeMs: 1, sha256: null, uploadId: 'u1', parentId: null, runId: run.id });
    store.recordUploaded(JOB, 'a.txt', { remoteId: 'doc-a', size: 3, mtimeMs: 1, sha256: null, parentId: null });
    // Simulate a crash: a second connection sees what is on disk right now.
    const other = new Database(path, { readonly: true });
    const states = other.prepare('SELECT source_key, state FROM items ORDER BY source_key').all();
    other.close();
    expect(states).toEqual([
      { source_key: 'a.txt', state: 'in-flight' },
      { source_key: 'b.txt', state: 'in-flight' },
    ]);
    store.flush();
    expect(store.getItem(JOB, 'a.txt')).toMatchObject({ state: 'uploaded', remoteId: 'doc-a', attempts: 1 });
    expect(store.inFlight(JOB).map((i) => i.sourceKey)).toEqual(['b.txt']);
  });

  it('forgets a folder digest as soon as any item of that folder is written, and only then', () => {
    const run = store.startRun({ job: 'mirror', jobKey: JOB, params: {}, uploadId: 'u1' });
    const intent = { size: 3, mtimeMs: 1, sha256: null, uploadId: 'u1', parentId: null, runId: run.id };
    // An intent alone is not an upload: nothing the store holds can be gone from the source yet.
    store.recordIntent(JOB, 'a/x.txt', intent);
    expect(store.hasUploaded(JOB)).toBe(false);
    for (const key of ['a/x.txt', 'a/y.txt', 'a/b/z.txt', 'top.txt']) {
      store.recordIntent(JOB, key, intent);
      store.recordUploaded(JOB, key, { remoteId: `doc-${key}`, size: 3, mtimeMs: 1, sha256: null, parentId: null });
    }
    store.setGroupDigest(JOB, 'a/', 0, 'digest-a');
    store.setGroupDigest(JOB, 'a/', 1, 'digest-a1');
    store.setGroupDigest(JOB, 'a/b/', 0, 'digest-ab');
    store.setGroupDigest(JOB, '', 0, 'digest-root');
    store.flush();
    expect(store.groupDigest(JOB, 'a/', 0)).toBe('digest-a');
    expect(store.uploadedCount(JOB)).toBe(4);
    expect(store.hasUploaded(JOB)).toBe(true);

    // A failure of an item in a/ (whatever path writes it) drops every chunk of a/, nothing else.
    store.recordIntent(JOB, 'a/y.txt', intent);
    expect(store.groupDigest(JOB, 'a/', 0)).toBeUndefined();
    expect(store.groupDigest(JOB, 'a/', 1)).toBeUndefined();
    expect(store.groupDigest(JOB, 'a/b/', 0)).toBe('digest-ab');
    expect(store.groupDigest(JOB, '', 0)).toBe('digest-root');
    expect(store.uploadedCount(JOB)).toBe(3);

    // A new item at the root drops the root's digest (the folder of 'new.txt' is '').
    store.recordUploaded(JOB, 'new.txt', { remoteId: 'doc-new', size: 1, mtimeMs: 1, sha256: null, parentId: null });
    store.flush();
    expect(store.groupDigest(JOB, '', 0)).toBeUndefined();
    expect(store.groupDigest(JOB, 'a/b/', 0)).toBe('digest-ab');
    // Digests belong to one job.
    expect(store.groupDigest('another job', 'a/b/', 0)).toBeUndefined();
  });

  it("drops a folder's digest on adoption and deletion too, whatever another job holds", () => {
    const other = 'another job';
    const row = (sourceKey: string) => ({ sourceKey, remoteId: `doc-${sourceKey}`, size: 1, mtimeMs: 1, sha256: null, parentId: null });
    // Another job without a digest writes into the same folder names: this job's digests stay.
    store.setGroupDigest(JOB, 'a/', 0, 'digest-a');
    store.setGroupDigest(JOB, 'b/', 0, 'digest-b');
    store.adopt(other, [row('a/x.txt'), row('b/y.txt')]);
    store.forgetUploaded(other);
    expect(store.groupDigest(JOB, 'a/', 0)).toBe('digest-a');
    expect(store.groupDigest(JOB, 'b/', 0)).toBe('digest-b');
    // This job adopts into a/ (an insert, then an update of the same row): a/'s digest goes.
    store.adopt(JOB, [row('a/x.txt')]);
    expect(store.groupDigest(JOB, 'a/', 0)).toBeUndefined();
    store.setGroupDigest(JOB, 'a/', 0, 'digest-a');
    store.adopt(JOB, [row('a/x.txt')]);
    expect(store.groupDigest(JOB, 'a/', 0)).toBeUndefined();
    expect(store.groupDigest(JOB, 'b/', 0)).toBe('digest-b');
    // Forgetting what it uploaded (--resync) deletes a/x.txt: a/'s digest goes again, b/'s stays.
    store.setGroupDigest(JOB, 'a/', 0, 'digest-a');
    store.forgetUploaded(JOB);
    expect(store.groupDigest(JOB, 'a/', 0)).toBeUndefined();
    expect(store.groupDigest(JOB, 'b/', 0)).toBe('digest-b');
  });

  it('remembers superseded documents when a changed file is uploaded again', () => {
    const run = store.startRun({ job: 'mirror', jobKey: JOB, params: {}, uploadId: 'u1' });
    const intent = { size: 3, mtimeMs: 1, sha256: null, uploadId: 'u1', parentId: null, runId: run.id };
    store.recordIntent(JOB, 'a.txt', intent);
    store.recordUploaded(JOB, 'a.txt', { remoteId: 'doc-1', size: 3, mtimeMs: 1, sha256: null, parentId: null });
    store.recordIntent(JOB, 'a.txt', { ...intent, size: 5, mtimeMs: 2 });
    store.recordUploaded(JOB, 'a.txt', { remoteId: 'doc-2', size: 5, mtimeMs: 2, sha256: null, parentId: null });
    expect(store.getItem(JOB, 'a.txt')).toMatchObject({ remoteId: 'doc-2', supersededIds: ['doc-1'], attempts: 2, size: 5 });
  });

  it('looks up fingerprints of a batch of files in one go', () => {
    const run = store.startRun({ job: 'mirror', jobKey: JOB, params: {}, uploadId: 'u1' });
    for (const k of ['a', 'b']) {
      store.recordIntent(JOB, k, { size: 1, mtimeMs: 7, sha256: null, uploadId: 'u1', parentId: null, runId: run.id });
    }
    store.recordUploaded(JOB, 'a', { remoteId: 'doc-a', size: 1, mtimeMs: 7, sha256: null, parentId: null });
    const found = store.fingerprints(JOB, ['a', 'b', 'missing', "it's \"quoted\""]);
    expect(found.get('a')).toEqual({ state: 'uploaded', remoteId: 'doc-a', size: 1, mtimeMs: 7, sha256: null, attrs: null });
    expect(found.get('b')).toMatchObject({ state: 'in-flight', remoteId: null });
    expect(found.has('missing')).toBe(false);
    expect(found.size).toBe(2);
  });

  it('gives the lock to one live holder, whatever run it names, and takes it back from a dead process', () => {
    const r1 = store.startRun({ job: 'mirror', jobKey: JOB, params: {}, uploadId: null });
    expect(store.acquireLock(JOB, 'token-1', r1.id)).toEqual({ ok: true });
    // Another acquisition is refused, even one naming the same run (a resume from elsewhere).
    const refused = store.acquireLock(JOB, 'token-2', r1.id);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.holder).toMatchObject({ runId: r1.id, pid: process.pid });
    // The holder itself may record a new run under the lock.
    expect(store.acquireLock(JOB, 'token-1', r1.id + 1)).toEqual({ ok: true });
    store.releaseLock(JOB, 'token-1');
    expect(store.acquireLock(JOB, 'token-2')).toEqual({ ok: true });

    // A holder whose process has exited is stale, and its run is marked interrupted.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    const db = new Database(path);
    db.prepare('UPDATE locks SET pid = ?, run_id = ? WHERE job_key = ?').run(Number(dead), r1.id, JOB);
    db.close();
    // The dead holder's token is handed over: its lease on the service is known to be dead too.
    expect(store.acquireLock(JOB, 'token-3')).toEqual({ ok: true, replaced: ['token-2'] });
    expect(store.getRun(r1.id)?.status).toBe('interrupted');

    // A live pid that now belongs to another process (started at another time) is stale too.
    const db2 = new Database(path);
    db2.prepare("UPDATE locks SET pid = ?, process_start = '1' WHERE job_key = ?").run(process.pid, JOB);
    db2.close();
    // token-3 died too, perhaps before its lease cleared token-2's claim from the service: both
    // are handed on, the newest first.
    expect(store.acquireLock(JOB, 'token-4')).toEqual({ ok: true, replaced: ['token-3', 'token-2'] });
    // A clean release ends the chain: the next holder took over from no one.
    store.releaseLock(JOB, 'token-4');
    expect(store.acquireLock(JOB, 'token-5')).toEqual({ ok: true });
  });

  it('adopts a listing of any length, each row as given, over what it held at those keys', () => {
    const run = store.startRun({ job: 'mirror', jobKey: JOB, params: {}, uploadId: 'u1' });
    // Held before: one in flight (adopting settles it), one uploaded long ago.
    store.recordIntent(JOB, 'f-007', { size: 1, mtimeMs: 1, sha256: null, uploadId: 'u1', parentId: null, runId: run.id });
    store.recordUploaded(JOB, 'f-007', { remoteId: 'old', size: 1, mtimeMs: 1, sha256: null, parentId: null });
    store.flush();
    // 123: two statements of 50 rows and 23 rows one by one; given out of key order.
    const items = Array.from({ length: 123 }, (_, i) => ({
      sourceKey: `f-${String(122 - i).padStart(3, '0')}`,
      remoteId: `doc-${122 - i}`,
      size: 122 - i,
      mtimeMs: 1_000 + (122 - i),
      sha256: i % 2 ? null : 'a'.repeat(64),
      parentId: i % 3 ? `folder-${i % 3}` : null,
    }));
    store.adopt(JOB, items);
    const got = store.fingerprints(JOB, items.map((i) => i.sourceKey));
    expect(got.size).toBe(123);
    for (const i of items) {
      expect(store.getItem(JOB, i.sourceKey), i.sourceKey).toMatchObject({ state: 'uploaded', remoteId: i.remoteId, size: i.size, mtimeMs: i.mtimeMs, sha256: i.sha256, parentId: i.parentId });
    }
    expect(store.getItem(JOB, 'f-007')?.remoteId).toBe('doc-7');
    expect(store.uploadedCount(JOB)).toBe(123);
  });

  it('stores folders by relative path', () => {
    store.setFolder(JOB, 'a/b', 'folder-1');
    expect(store.getFolder(JOB, 'a/b')).toBe('folder-1');
    expect(store.getFolder(JOB, 'a')).toBeUndefined();
  });

  it('takes up the in-flight items of a store written before they were named so (schema 9, "uploading")', () => {
    const run = store.startRun({ job: 'mirror', jobKey: JOB, params: {}, uploadId: 'u1' });
    store.recordIntent(JOB, 'a.txt', { size: 3, mtimeMs: 1, sha256: null, uploadId: 'u1', parentId: null, runId: run.id });
    store.close();
    // The store as ferry wrote it at schema 9.
    const db = new Database(path);
    db.exec(`DROP INDEX items_in_flight; UPDATE items SET state = 'uploading';
             CREATE INDEX items_uploading ON items (job_id, source_key) WHERE state = 'uploading';`);
    db.pragma('user_version = 9');
    db.close();
    store = new SqliteCheckpointStore(path);
    expect(store.inFlight(JOB).map((i) => [i.sourceKey, i.state])).toEqual([['a.txt', 'in-flight']]);
    const check = new Database(path, { readonly: true });
    expect(check.prepare("SELECT count(*) AS n FROM items WHERE state = 'uploading'").get()).toEqual({ n: 0 });
    expect(check.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'items_%' ORDER BY name").all()).toEqual([{ name: 'items_in_flight' }]);
    check.close();
  });

  it('refuses a database written by a newer version', () => {
    store.close();
    const db = new Database(path);
    db.pragma('user_version = 99');
    db.close();
    expect(() => new SqliteCheckpointStore(path)).toThrow(/schema version 99, newer than this ferry understands/);
    store = new SqliteCheckpointStore(':memory:');
  });
});
