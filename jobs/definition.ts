// A job as one document: the flags of its command, a job file for `ferry run FILE` (cron), or the
// record of a run that `ferry jobs resume` continues. All three are the same form (the job file's
// keys, src/settings/declared.ts), checked by one schema and turned into a job's options here, so
// that a setting reads the same whichever door it came in by, and a mistake is named by the flag
// or the key it was given under.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { z } from 'zod';
import { nearest } from '../src/nearest.js';
import { parseBandwidthLimit, type BandwidthLimit } from '../src/sync/bandwidth.js';
import { hasLimits, type LimitSettings } from '../src/runner/limits.js';
import { yaml } from '../src/libraries.js';
import { ConfigurationError } from '../src/api/errors.js';
import { formatIssues } from '../src/config/profile.js';
import { parseSize } from '../src/runner/format.js';
import { parseDuration } from '../src/duration.js';
import { readFilterFile } from '../src/config/filter-file.js';
import { visible } from '../src/backends/names.js';
import { OWN_METADATA } from '../src/backends/project/identity.js';
import { JOB_KINDS, SETTINGS, type JobKind, type SettingName } from '../src/settings/declared.js';
import { getPath, nameOf, setPath, type Form } from '../src/settings/form.js';
import { flagProblems, jobKeys, jobSettings, kindSchema } from '../src/settings/schema.js';
import { resumeRecord } from '../src/settings/resume.js';
import { writableFile } from '../src/settings/files.js';
import type { MirrorOptions } from './mirror.js';
import type { UploadOptions } from './upload.js';
import { DEFAULT_RETRY_POLICY } from './retry-policy.js';
import type { PullOptions } from './pull.js';
import { localFilesFrom } from './pull-local-files.js';
import type { BackupOptions } from './playbooks.js';
import type { MigrateOptions } from './migrate.js';
import type { LeaseSettings } from '../src/backends/project/lease-use.js';
import { loadMapping } from '../src/playbooks/mapping.js';
import { parseShard } from '../src/tenants/shard.js';
import { codePage } from '../src/backends/archive-encoding.js';

export { JOB_KINDS, type JobKind };

/** What a migrate job asks, in the command line's terms (src/cli/actions/migrate.ts runs it). */
export interface MigrateRequest {
  from: string;
  to: string;
  options: MigrateOptions;
  verify: boolean;
}

/** Where a job's form came from: messages name a flag, a key of a file, or a run's record. */
type Origin = { from: 'file'; path: string } | { from: 'flags' } | { from: 'record'; runId: number };

/** A job, read and checked: the options of its one job, and where its run keeps state and metrics. */
export type LoadedDefinition = {
  /** The form as given (a job file's keys). */
  definition: Form & { job: JobKind };
  /** What a run of it records, for `ferry jobs resume` (src/settings/resume.ts). */
  record: Form;
  /** The profile the job's client uses (a migration: the target's). */
  profile: string | undefined;
  rps: number | undefined;
  state: string | undefined;
  /** --stats, or the file's `stats`: how often a run off a terminal says how it goes. */
  statsIntervalMs: number | undefined;
  /** The run's metrics file (absolute) and Pushgateway, when the file names them. */
  metricsFile?: string | undefined;
  pushgateway?: string | undefined;
  notify?: string | undefined;
} & (
  | { kind: 'mirror'; mirror: MirrorOptions }
  | { kind: 'upload'; mirror: MirrorOptions; upload: UploadOptions; ack: boolean }
  | { kind: 'pull'; pull: PullOptions }
  | { kind: 'playbooks-backup'; backup: BackupOptions }
  | { kind: 'migrate'; migrate: MigrateRequest }
);

/** A job file (YAML or JSON); relative paths in it are relative to the file. */
export function loadDefinition(path: string): LoadedDefinition {
  let raw: unknown;
  try {
    raw = yaml().parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigurationError(`cannot read job file ${path}: ${(err as Error).message}`);
  }
  return definitionOf(raw, dirname(resolve(path)), { from: 'file', path });
}

/** A command's flags, as src/settings/form.ts wrote them; relative paths stay relative to the working folder. */
export function definitionFromFlags(kind: JobKind, form: Form): LoadedDefinition {
  return definitionOf({ job: kind, ...form }, undefined, { from: 'flags' });
}

/** A run's record (its paths are absolute). */
export function definitionFromRecord(kind: JobKind, runId: number, form: Form): LoadedDefinition {
  return definitionOf({ job: kind, ...form }, undefined, { from: 'record', runId });
}

const schemas = new Map<string, z.ZodObject>();

function definitionOf(raw: unknown, base: string | undefined, origin: Origin): LoadedDefinition {
  const where = origin.from === 'file' ? `job file ${origin.path}: ` : origin.from === 'record' ? `the record of run ${origin.runId}: ` : '';
  const kind = raw && typeof raw === 'object' && 'job' in raw ? (raw as { job: unknown }).job : undefined;
  if (kind === undefined) throw new ConfigurationError(`${where}job: required, one of ${JOB_KINDS.join(', ')}`);
  if (!(JOB_KINDS as readonly unknown[]).includes(kind)) throw new ConfigurationError(`${where}job: ${JSON.stringify(kind)} is not a kind of job; one of ${JOB_KINDS.join(', ')}`);
  const job = kind as JobKind;
  // Flags were read by their kinds one by one (settings/form.ts): no schema to load for them.
  if (origin.from === 'flags') {
    const problems = flagProblems(job, raw as Form);
    if (problems.length > 0) throw new ConfigurationError(problems.join('; '));
    return new Reader(job, raw as Form & { job: JobKind }, base, origin, where).loaded();
  }
  const taken = origin.from === 'file' ? 'file' : 'flags';
  let schema = schemas.get(`${job}|${taken}`);
  if (!schema) schemas.set(`${job}|${taken}`, (schema = kindSchema(job, taken)));
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ConfigurationError(`${where}${formatIssues(parsed.error)}${keyHint(job, parsed.error)}`);
  const d = parsed.data as Form & { job: JobKind };
  // A migration names what it copies: projects, playbooks, or both (the command line says it in its own words).
  if (job === 'migrate' && d.projects === undefined && d.playbooks === undefined) throw new ConfigurationError(`${where}projects: name projects or playbooks (ids, or all)`);
  return new Reader(job, d, base, origin, where).loaded();
}

/** One form's values, with the defaults declared for them, named in messages as the origin names them. */
class Reader {
  constructor(
    private readonly job: JobKind,
    private readonly d: Form & { job: JobKind },
    private readonly base: string | undefined,
    private readonly origin: Origin,
    private readonly where: string,
  ) {}

  private raw(name: SettingName): unknown {
    const s = SETTINGS[name];
    return getPath(this.d, s.key) ?? ('default' in s ? s.default : undefined);
  }
  private given(name: SettingName): boolean {
    return getPath(this.d, SETTINGS[name].key) !== undefined;
  }
  private text(name: SettingName): string | undefined {
    const v = this.raw(name);
    return v === undefined ? undefined : String(v);
  }
  private on(name: SettingName): boolean | undefined {
    return this.raw(name) as boolean | undefined;
  }
  private count(name: SettingName): number | undefined {
    const v = this.raw(name);
    return v === undefined ? undefined : Number(v);
  }
  private ms(name: SettingName): number | undefined {
    const v = this.text(name);
    return v === undefined ? undefined : parseDuration(v);
  }
  private bytes(name: SettingName): number | undefined {
    const v = this.text(name);
    return v === undefined ? undefined : parseSize(v);
  }
  private list(name: SettingName): string[] | undefined {
    return this.raw(name) as string[] | undefined;
  }
  /** A path as the job uses it: a job file's is relative to the file. */
  private path(name: SettingName): string | undefined {
    const v = this.text(name);
    return v === undefined ? undefined : this.base !== undefined ? resolve(this.base, v) : v;
  }
  name(name: SettingName): string {
    return nameOf(SETTINGS[name], this.origin.from === 'flags' ? 'flags' : 'file');
  }
  refuse(message: string): never {
    throw new ConfigurationError(`${this.where}${message}`);
  }

  loaded(): LoadedDefinition {
    const common = {
      definition: this.d,
      record: this.record(),
      profile: this.job === 'migrate' ? this.text('toProfile') : this.text('profile'),
      rps: this.count('rps'),
      state: this.path('state'),
      statsIntervalMs: this.given('stats') ? this.ms('stats') : undefined,
      ...(this.given('metricsFile') ? { metricsFile: resolve(this.path('metricsFile')!) } : {}),
      ...(this.given('pushgateway') ? { pushgateway: this.text('pushgateway') } : {}),
      ...(this.given('notify') ? { notify: this.text('notify') } : {}),
    };
    switch (this.job) {
      case 'migrate':
        return { ...common, kind: 'migrate', migrate: this.migrate() };
      case 'playbooks-backup':
        return { ...common, kind: 'playbooks-backup', backup: { out: this.path('out')!, keep: this.count('keep'), keepDaily: this.count('keepDaily'), keepWeekly: this.count('keepWeekly'), lock: this.lease() } };
      case 'pull':
        return { ...common, kind: 'pull', pull: this.pull() };
      case 'mirror': {
        // --wait waits for processing; without it, what is still processing is counted.
        const waited = this.on('wait') ? { waitMs: this.ms('timeout')! } : { countProcessing: true };
        return { ...common, kind: 'mirror', mirror: { ...this.mirror(), ...waited } };
      }
      case 'upload': {
        const mirror = this.mirror();
        const reasons = this.raw('retryReasons') as UploadOptions['policy'] extends infer P ? (P extends { reasons: infer R } ? Partial<R> : never) : never;
        const upload: UploadOptions = {
          ...mirror,
          playbook: this.text('playbook')!,
          name: this.text('name'),
          wait: this.on('noWait'),
          timeoutMs: this.ms('timeout'),
          retryFailed: this.on('retryFailed'),
          policy: {
            reasons: { ...DEFAULT_RETRY_POLICY.reasons, ...reasons },
            maxRounds: this.count('retryRounds') ?? DEFAULT_RETRY_POLICY.maxRounds,
            ocrFallback: this.text('ocrFallback') as 'never' | 'detect' | undefined,
          },
        };
        return { ...common, kind: 'upload', mirror, upload, ack: this.on('ack') === true };
      }
    }
  }

  /** The settings a resumed run keeps, with its paths made absolute (a resume may run from elsewhere). */
  private record(): Form {
    const form: Form = { ...this.d };
    for (const s of jobSettings(this.job)) {
      const v = getPath(form, s.key);
      if ('isPath' in s.kind && typeof v === 'string') setPath(form, s.key, resolve(this.base ?? process.cwd(), v));
    }
    return resumeRecord(this.job, form);
  }

  private mirror(): MirrorOptions {
    const manifest = this.manifest();
    return {
      source: this.path('source')!,
      project: this.text('project')!,
      to: this.text('to'),
      ...this.filters(),
      bwlimit: this.bwlimit(),
      concurrency: this.count('concurrency'),
      checksum: this.on('checksum'),
      resync: this.on('resync'),
      followSymlinks: this.on('followSymlinks'),
      archiveEncoding: this.text('archiveEncoding'),
      maxEntries: this.count('maxEntries'),
      stripComponents: this.count('stripComponents'),
      ocrEngine: this.text('ocrEngine') as MirrorOptions['ocrEngine'],
      ocrStrategy: this.text('ocrStrategy') as MirrorOptions['ocrStrategy'],
      coordinateExtractionStrategy: this.text('coordinateExtraction') as MirrorOptions['coordinateExtractionStrategy'],
      metadata: this.metadata(),
      ...manifest,
      lock: this.lease(),
      limits: this.window(),
      record: this.record(),
    };
  }

  private pull(): PullOptions {
    const dir = this.path('dir')!;
    if (this.given('backupDir') && !this.on('overwriteChanged')) this.refuse(`${this.name('backupDir')} needs ${this.name('overwriteChanged')}: without it no pulled file is replaced, so none is moved`);
    const manifestOut = this.path('manifestOut');
    if (manifestOut !== undefined) writableFile(this.name('manifestOut'), manifestOut);
    return {
      ...localFilesFrom({ localNames: this.given('localNames') ? this.text('localNames') : undefined, overwriteChanged: this.on('overwriteChanged'), backupDir: this.path('backupDir') }, dir),
      project: this.text('pullProject')!,
      dir,
      ...(this.on('ignoreChecksum') ? { ignoreChecksum: true } : {}),
      from: this.text('from'),
      ...(manifestOut !== undefined ? { manifestOut } : {}),
      ...this.filters(),
      ...(this.given('bwlimit') ? { bwlimit: this.bwlimit() } : {}),
      concurrency: this.count('concurrency'),
      limits: this.window(),
    };
  }

  private migrate(): MigrateRequest {
    const projects = this.raw('projects') as 'all' | string[] | undefined;
    const playbooks = this.raw('playbooks') as 'all' | string[] | undefined;
    const map = this.path('map');
    const options: MigrateOptions = {
      ...(projects === 'all' ? { allProjects: true } : { projects: projects ?? [] }),
      ...(playbooks === 'all' ? { allPlaybooks: true } : { playbooks: playbooks ?? [] }),
      ...(this.given('shard') ? { shard: parseShard(this.text('shard')!) } : {}),
      sameTenant: this.on('sameTenant') === true,
      ...(map !== undefined ? { mapping: loadMapping(map) } : {}),
      intoExisting: this.on('intoExisting') === true,
      concurrency: this.count('concurrency'),
      ...(this.given('bwlimit') ? { bwlimit: this.bwlimit() } : {}),
      lock: this.lease(),
      limits: this.window(),
      ...(this.on('wait') ? { waitMs: this.ms('timeout') } : {}),
      record: this.record(),
    };
    return { from: this.text('fromProfile')!, to: this.text('toProfile')!, options, verify: this.on('verify') === true };
  }

  private bwlimit(): BandwidthLimit | undefined {
    const text = this.text('bwlimit');
    return text === undefined ? undefined : parseBandwidthLimit(text, parseSize);
  }

  /** The lease on the service (--wait-lock, --lock-ttl, --no-lock). */
  private lease(): LeaseSettings {
    return {
      ...(this.on('lock') === false ? { off: true } : {}),
      ...(this.given('waitLock') ? { waitMs: this.ms('waitLock') } : {}),
      ...(this.given('lockTtl') ? { ttlMs: this.ms('lockTtl') } : {}),
    };
  }

  /** The run's window: exit 8 at a limit, the next run carries on. */
  private window(): LimitSettings | undefined {
    const settings: LimitSettings = {
      ...(this.given('maxDuration') ? { maxDurationMs: this.ms('maxDuration') } : {}),
      ...(this.given('maxTransfer') ? { maxTransfer: this.bytes('maxTransfer') } : {}),
      ...(this.given('maxFiles') ? { maxFiles: this.count('maxFiles') } : {}),
      cutoff: this.text('cutoffMode') === 'hard' ? 'hard' : 'soft',
    };
    return hasLimits(settings) ? settings : undefined;
  }

  /** Patterns, a rules file (read now: one missing or wrong stops the job before it starts), size and age limits. */
  private filters(): Pick<MirrorOptions, 'include' | 'exclude' | 'rules' | 'minSize' | 'maxSize' | 'minAgeMs' | 'maxAgeMs'> {
    const filterFrom = this.path('filterFrom');
    if (filterFrom !== undefined && (this.list('include')?.length || this.list('exclude')?.length)) {
      this.refuse(`${this.name('filterFrom')} cannot be given with ${this.name('include')} or ${this.name('exclude')}: put those in the file as "+ PATTERN" and "- PATTERN" lines, in the order they should apply`);
    }
    const out = { minSize: this.bytes('minSize'), maxSize: this.bytes('maxSize'), minAgeMs: this.ms('minAge'), maxAgeMs: this.ms('maxAge') };
    if (out.minSize !== undefined && out.maxSize !== undefined && out.minSize > out.maxSize) this.refuse(`${this.name('minSize')} ${this.text('minSize')} is larger than ${this.name('maxSize')} ${this.text('maxSize')}: no file would be left`);
    if (out.minAgeMs !== undefined && out.maxAgeMs !== undefined && out.minAgeMs > out.maxAgeMs) this.refuse(`${this.name('minAge')} ${this.text('minAge')} is longer than ${this.name('maxAge')} ${this.text('maxAge')}: no file would be left`);
    return {
      ...(filterFrom !== undefined ? { include: [], exclude: [], rules: readFilterFile(filterFrom, `${this.where}${this.name('filterFrom')} ${this.text('filterFrom')}`) } : { include: this.list('include') ?? [], exclude: this.list('exclude') ?? [] }),
      ...Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)),
    };
  }

  /** The manifest of each file's metadata and settings (read where the source opens). */
  private manifest(): Pick<MirrorOptions, 'manifest' | 'manifestDelimiter' | 'manifestPartial' | 'manifestEncoding' | 'manifestSheet'> {
    const manifest = this.path('manifest');
    if (manifest === undefined) {
      for (const name of ['manifestEncoding', 'manifestSheet', 'manifestDelimiter', 'manifestPartial'] as const) if (this.given(name)) this.refuse(`${this.name(name)} needs ${this.name('manifest')}`);
      return {};
    }
    const delimiter = this.text('manifestDelimiter');
    return {
      manifest,
      ...(delimiter !== undefined ? { manifestDelimiter: delimiter === 'tab' ? '\t' : delimiter } : {}),
      ...(this.on('manifestPartial') ? { manifestPartial: true } : {}),
      ...(this.given('manifestEncoding') ? { manifestEncoding: codePage(this.name('manifestEncoding'), this.text('manifestEncoding')!) } : {}),
      ...(this.given('manifestSheet') ? { manifestSheet: this.text('manifestSheet') } : {}),
    };
  }

  /** Metadata on every document; keys starting with `ferry.` are ferry's own. */
  private metadata(): Record<string, string> | undefined {
    const pairs = this.raw('metadata') as Record<string, string> | undefined;
    if (pairs === undefined || Object.keys(pairs).length === 0) return undefined;
    for (const [key, value] of Object.entries(pairs)) {
      if (OWN_METADATA.test(key)) this.refuse(`${this.name('metadata')} "${visible(`${key}=${value}`)}": keys starting with "ferry." are ferry's own (the identity of each document, docs/cli.md); choose another key`);
    }
    return pairs;
  }
}

/** For a key no setting of this kind declares: the declared key nearest it, as a mistyped flag is told. */
function keyHint(kind: JobKind, error: z.ZodError): string {
  const declared = ['job', ...jobKeys(kind).map((k) => k.split('.')[0]!)];
  return error.issues
    .filter((i) => i.code === 'unrecognized_keys' && i.path.length === 0)
    .flatMap((i) => (i as { keys: string[] }).keys)
    .map((key) => {
      const near = nearest(key, declared);
      return near ? ` (did you mean ${near}?)` : ` ("${key}" is no setting of a ${kind} job: the keys are in docs/cli.md under ferry run FILE)`;
    })
    .join('');
}
