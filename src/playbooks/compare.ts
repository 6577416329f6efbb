// Whether a playbook on a service is the one an archive holds: the archive it would export now,
// compared but for ids and dates (the comparison `migrate verify` makes), and the files beside
// playbook.json byte for byte. A replay from a fresh checkpoint store uses it to find the playbook
// an earlier replay (another store, another machine) made, instead of making it again.
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import type { FerryClient } from '../api/client.js';
import type { Playbook } from '../api/types.js';
import { exportPlaybook } from './export.js';
import { PLAYBOOK_PATH, comparable } from './format.js';
import { openArchive, type OpenedArchive } from './read.js';

export async function matchesArchive(client: FerryClient, candidate: Playbook, archive: OpenedArchive, signal?: AbortSignal): Promise<boolean> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-match-'));
  try {
    const path = join(dir, 'candidate.zip');
    await exportPlaybook(client, candidate, path, signal);
    const there = await openArchive(path);
    const files = (x: OpenedArchive) => x.manifest.entries.filter((e) => e.path !== PLAYBOOK_PATH).map((e) => e.sha256).sort();
    return isDeepStrictEqual(comparable(there.playbook), comparable(archive.playbook)) && isDeepStrictEqual(files(there), files(archive));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The first playbook of the archive's name, not yet claimed, that matches it whole. */
export async function findReplayed(client: FerryClient, archive: OpenedArchive, claimed: ReadonlySet<string>, signal?: AbortSignal): Promise<string | undefined> {
  const name = archive.playbook.playbook.name ?? '';
  for (const p of await client.playbooks.searchAll({ searchText: name }).all()) {
    if (p.name !== name || claimed.has(p.objectIdentifier)) continue;
    if (await matchesArchive(client, p, archive, signal)) return p.objectIdentifier;
  }
  return undefined;
}
