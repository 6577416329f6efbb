// `ferry check SOURCE --project P`: does the project hold exactly what the folder or zip holds?
// No checkpoint store is read or written: the service is asked (jobs/check.ts).
import type { Command } from 'commander';
import { check, type CheckOptions, type CheckReport } from '../../../jobs/check.js';
import { loadDefinition } from '../../../jobs/definition.js';
import { OTHER_SETTINGS, SETTINGS } from '../../settings/declared.js';
import { ConfigurationError } from '../../api/errors.js';
import { normaliseRemotePath } from '../../../jobs/mirror.js';
import { formatBytes, safeText, visible } from '../../text.js';
import { createContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { camelKey } from '../envelope.js';
import { Reply } from '../reply.js';
import { layout } from '../../runner/layout.js';
import { projectFlag, resolveProject } from '../../backends/project/named.js';
import { settingsOf } from '../../settings/values.js';

/** Differences printed as text; --json lists every one. */
const SHOWN = 50;

type CheckFlags = { project?: string; to?: string; checksum?: boolean; oneWay?: boolean; download?: boolean; json?: boolean; job?: string; include?: string[]; exclude?: string[]; filterFrom?: string; archiveEncoding?: string; maxEntries?: string; stripComponents?: string; manifest?: string; manifestDelimiter?: string; manifestEncoding?: string; manifestSheet?: string };

/** What is compared, and with which project: from the flags, or from a mirror job file. */
type Compared = Pick<CheckOptions, 'source' | 'to' | 'include' | 'exclude' | 'rules' | 'archiveEncoding' | 'maxEntries' | 'stripComponents' | 'manifest' | 'manifestDelimiter' | 'manifestEncoding' | 'manifestSheet'> & { project: string; profile?: string | undefined };

export async function checkAction(source: string | undefined, opts: CheckFlags, cmd: Command): Promise<void> {
  const compared = opts.job !== undefined ? fromJobFile(opts.job, source, opts) : fromFlags(source, opts);
  const { client } = createContext(cmd, undefined, compared.profile);
  const project = await resolveProject(client, projectFlag(opts.job !== undefined ? `project (job file ${opts.job})` : '--project', compared.project)).catch(async (err: unknown) => {
    await client.close();
    throw err;
  });
  // Under --json every difference is written as it is found: a million of them are never held.
  const { profile: _profile, ...what } = compared;
  const reply = Reply.to(opts);
  const items = reply.listing({ project, to: normaliseRemotePath(what.to) }, 'differences');
  let report: CheckReport;
  try {
    report = await check({ ...what, project, checksum: opts.checksum === true, download: opts.download === true, oneWay: opts.oneWay === true, onDifference: items && ((d) => items.item(d)) }, client);
  } catch (err) {
    // Differences already written: the object is closed with the error, the one answer there is.
    if (!items?.opened) throw err;
    process.stderr.write(`ferry: ${safeText((err as Error).message)}\n`);
    items.end('error', EXIT.failed, { error: (err as Error).message });
    process.exitCode = EXIT.failed;
    return;
  } finally {
    await client.close();
  }
  const code = report.differenceCount === 0 ? EXIT.ok : EXIT.failed;
  // Counts under --json are keyed as every JSON answer keys them (camelCase): missingOnTheService.
  const counts = Object.fromEntries(Object.entries(report.counts).map(([k, n]) => [camelKey(k), n]));
  if (items) {
    const { differences: _kept, project: _p, to: _t, ...rest } = report;
    items.end(code === EXIT.ok ? 'matching' : 'different', code, { ...rest, counts });
  } else reply.text(text(report));
  process.exitCode = code;
}

function fromFlags(source: string | undefined, opts: CheckFlags): Compared {
  if (source === undefined) throw new ConfigurationError('ferry check: name the SOURCE to compare (or --job FILE, a mirror job file that names it)');
  if (opts.project === undefined) throw new ConfigurationError("ferry check: --project is required (or --job FILE, a mirror job file that names it)");
  return { source, ...settingsOf(OTHER_SETTINGS.check, opts), project: opts.project };
}


/** `--job FILE`: what its runs mirror, compared as they send it (its filters, archive and sheet settings, its profile). */
function fromJobFile(file: string, source: string | undefined, opts: CheckFlags): Compared {
  // Check's declared settings are what a job file answers: given beside --job they would say it twice, perhaps differently.
  const given = opts as Record<string, unknown>;
  const twice = OTHER_SETTINGS.check.filter((name) => given[name] !== undefined && !(Array.isArray(given[name]) && (given[name] as unknown[]).length === 0));
  if (source !== undefined || twice.length) {
    const named = [...(source !== undefined ? ['SOURCE'] : []), ...twice.map((name) => SETTINGS[name].flag as string)];
    throw new ConfigurationError(`ferry check --job ${file}: the job file names the source, project, filters and archive settings; leave out ${named.join(', ')}`);
  }
  const loaded = loadDefinition(file);
  if (loaded.kind !== 'mirror') throw new ConfigurationError(`ferry check --job ${file}: takes a mirror job file; this one is a ${loaded.kind} job`);
  const m = loaded.mirror;
  return {
    source: m.source,
    project: m.project,
    to: m.to,
    include: m.include,
    exclude: m.exclude,
    rules: m.rules,
    archiveEncoding: m.archiveEncoding,
    maxEntries: m.maxEntries,
    stripComponents: m.stripComponents,
    manifest: m.manifest,
    manifestDelimiter: m.manifestDelimiter,
    manifestEncoding: m.manifestEncoding,
    manifestSheet: m.manifestSheet,
    profile: loaded.profile,
  };
}

function text(r: CheckReport): string {
  const lines = [
    `check ${visible(r.source)} against project ${r.project}${r.to ? `/${r.to}` : ''}: ${r.differenceCount === 0 ? 'matching' : `${r.differenceCount} difference${r.differenceCount === 1 ? '' : 's'}`}`,
    `  matching ${r.matching}${r.skipped ? `  skipped ${r.skipped} (as the mirror skips them)` : ''}${r.matchingBySizeOnly ? ` (${r.matchingBySizeOnly} by size alone: no fingerprint on the service; --checksum reads them back)` : ''}${r.olderVersions ? `  older versions ${r.olderVersions} (earlier uploads of changed files, kept by the service)` : ''}  changed ${r.counts.changed}  missing on the service ${r.counts['missing on the service']}  only on the service ${r.onlyOnServiceLeftOut !== undefined ? `${r.onlyOnServiceLeftOut} (left out: --one-way)` : r.counts['only on the service']}${r.counts['twice on the service'] ? `  twice on the service ${r.counts['twice on the service']}` : ''}  unreadable locally ${r.counts['unreadable locally']}${r.counts['metadata differs'] ? `  metadata differs ${r.counts['metadata differs']}` : ''}  hashed ${formatBytes(r.bytesHashed)}`,
  ];
  const refused = Object.entries(r.refused);
  if (refused.length) {
    const n = refused.reduce((sum, [, count]) => sum + count, 0);
    lines.push(`  of the matching, ${n} refused by the service's processing (there, but not indexed): ${refused.map(([reason, count]) => `${reason} ${count}`).join(', ')}; \`ferry report\` on their batch names each and what to do`);
  }
  for (const d of r.differences.slice(0, SHOWN)) lines.push(`  ${d.kind}: ${d.path}: ${d.detail}`);
  for (const p of r.problems.slice(0, SHOWN)) lines.push(`  ${p.key === '(service)' || p.key === '(source)' ? '' : 'skipped: '}${visible(p.key)}: ${safeText(p.reason)}`);
  if (r.differenceCount > SHOWN) lines.push(`  … and ${r.differenceCount - SHOWN} more (--json lists every one)`);
  return `${layout(lines.join('\n'))}\n`;
}
