// `ferry scan`: reads the source (and, with --project, the project's documents) and says what a
// mirror would meet. The --html folder is checked before the walk; a project this client cannot
// read is exit 3, said plainly.
import type { Command } from 'commander';
import { existsSync, statSync } from 'node:fs';
import { writeWhole } from '../../backends/own-files.js';
import { dirname, resolve } from 'node:path';
import { scan } from '../../../jobs/scan.js';
import { ConfigurationError, NotFoundError, PermissionDeniedError } from '../../api/errors.js';
import { createContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { Reply } from '../reply.js';
import { projectFlag, resolveProject } from '../../backends/project/named.js';
import { settingsOf } from '../../settings/values.js';
import { OTHER_SETTINGS } from '../../settings/declared.js';
import { renderScanHtml, renderScanText } from '../../scan/render.js';
import { visible } from '../../text.js';
import type { FerryClient } from '../../api/client.js';

/** Its settings (OTHER_SETTINGS.scan, read by settingsOf) and its own flags. */
type ScanFlags = Record<string, unknown> & { project?: string; to?: string; rps?: string; html?: string; json?: boolean };

export async function scanAction(source: string, opts: ScanFlags, cmd: Command): Promise<void> {
  const reply = Reply.to(opts);
  const html = opts.html !== undefined ? htmlPath(opts.html) : undefined;
  const settings = settingsOf(OTHER_SETTINGS.scan, opts);
  if (opts.to !== undefined && opts.project === undefined) throw new ConfigurationError('--to names a folder of the project: give --project too');
  // A client only for a project: a scan of a folder alone needs no service, no profile.
  const client: FerryClient | undefined = opts.project !== undefined ? createContext(cmd, opts.rps).client : undefined;
  try {
    const project = client && opts.project !== undefined ? await resolveProject(client, projectFlag('--project', opts.project)) : undefined;
    const report = await scan({ source, ...settings, project, to: opts.to }, client).catch((err: unknown) => {
      if (project && (err instanceof NotFoundError || err instanceof PermissionDeniedError)) throw new Unreadable(project, err);
      throw err;
    });
    if (html) await writeWhole(html, renderScanHtml(report));
    reply.answer('succeeded', EXIT.ok, { ...report, ...(html ? { html } : {}) }, () => `${renderScanText(report)}${html ? `  page: ${visible(html)}\n` : ''}`);
    process.exitCode = EXIT.ok;
  } catch (err) {
    if (!(err instanceof Unreadable)) throw err;
    reply.error(EXIT.aborted, err.message);
    process.exitCode = EXIT.aborted;
  } finally {
    await client?.close();
  }
}

/** The project's documents cannot be read by this client: nothing to predict from. */
class Unreadable extends Error {
  constructor(project: string, cause: NotFoundError | PermissionDeniedError) {
    super(
      cause instanceof NotFoundError
        ? `project ${project} cannot be read by this client (the service answers that it does not exist): \`ferry ls\` lists the projects it sees`
        : `project ${project} cannot be read by this client (the service refused it, ${cause.status}): use a profile whose application may read it`,
    );
  }
}

/** --html FILE: its folder must exist (said before the walk, not after it). */
function htmlPath(file: string): string {
  const path = resolve(file);
  const folder = dirname(path);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new ConfigurationError(`--html ${visible(file)}: the folder ${visible(folder)} does not exist`);
  if (existsSync(path) && statSync(path).isDirectory()) throw new ConfigurationError(`--html ${visible(file)} is a folder: give the page's file name`);
  return path;
}
