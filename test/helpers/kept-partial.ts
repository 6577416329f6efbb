// Where a pull keeps a large document's first bytes to continue from (src/backends/partials.ts),
// for tests that plant such a file: what a killed pull leaves, or something in its place.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { resumableName } from '../../src/backends/partials.js';
import { pullJobKey } from '../../jobs/pull.js';
import { remoteFiles, type Service } from './service.js';

/** The path `ferry pull PROJECT OUT` keeps `name`'s partial download under (OUT is made), its content's version as the service names it now. */
export async function keptPartialPath(service: Service, project: string, out: string, name: string): Promise<string> {
  const client = service.client();
  const doc = (await remoteFiles(client, project)).find((d) => d.name === name)!;
  // The version as a pull asks for it: a Range from byte 1.
  const probe = await client.documents.downloadFrom(doc, doc.size!, 1);
  probe.body.destroy();
  await mkdir(out, { recursive: true });
  const jobKey = pullJobKey(service.emulator.baseUrl, { project, dir: out });
  return join(out, resumableName(jobKey, { key: name, marker: doc.objectIdentifier!, size: doc.size! }, probe.version ?? ''));
}
