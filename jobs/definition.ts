// A job as one document: the flags of its command, a job file for `ferry run FILE` (cron), or the
// record of a run that `ferry jobs resume` continues. All three are the same form (the job file's
// keys, src/settings/declared.ts), checked by one schema and turned into a job's options here, so
// that a setting reads the same whichever door it came in by, and a mistake is named by the flag
// or the key it was given under.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { z } from 'zod';
import { nearest } from '../src/nearest.js';
import { hasLimits, type LimitSettings } from '../src/runner/limits.js';
import { yaml } from '../src/libraries.js';
import { ConfigurationError } from '../src/api/errors.js';
import { formatIssues } from '../src/config/profile.js';
import { visible } from '../src/text.js';
import { OWN_METADATA } from '../src/backends/project/identity.js';
import { JOB_KINDS, JOB_SETTINGS, SENDING_SETTINGS, type JobKind } from '../src/settings/declared.js';
import { filtersFrom, SettingValues } from '../src/settings/values.js';
import type { SizeAgeLimits } from '../src/sync/filters.js';
import { getPath, setPath, type Form } from '../src/settings/form.js';
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

/** A job's options from one form: its settings' values (settings/values.ts), and what they make together. */
class Reader {
  private readonly v: SettingValues;

  constructor(
    private readonly job: JobKind,
    private readonly d: Form & { job: JobKind },
    private readonly base: string | undefined,
    origin: Origin,
    where: string,
  ) {
    this.v = new SettingValues(d, { names: origin.from === 'flags' ? 'flags' : 'file', base, where });
  }

  loaded(): LoadedDefinition {
    const v = this.v;
    v.check(JOB_SETTINGS[this.job]);
    const metricsFile = v.value('metricsFile');
    const common = {
      definition: this.d,
      record: this.record(),
      profile: this.job === 'migrate' ? v.value('toProfile') : v.value('profile'),
      rps: v.value('rps'),
      state: v.value('state'),
      statsIntervalMs: v.given('stats') ? v.value('stats') : undefined,
      ...(metricsFile !== undefined ? { metricsFile: resolve(metricsFile) } : {}),
      ...(v.given('pushgateway') ? { pushgateway: v.value('pushgateway') } : {}),
      ...(v.given('notify') ? { notify: v.value('notify') } : {}),
    };
    switch (this.job) {
      case 'migrate':
        return { ...common, kind: 'migrate', migrate: this.migrate() };
      case 'playbooks-backup':
        return { ...common, kind: 'playbooks-backup', backup: { out: v.value('out')!, keep: v.value('keep'), keepDaily: v.value('keepDaily'), keepWeekly: v.value('keepWeekly'), lock: this.lease() } };
      case 'pull':
        return { ...common, kind: 'pull', pull: this.pull() };
      case 'mirror': {
        // --wait waits for processing; without it, what is still processing is counted.
        const waited = v.value('wait') ? { waitMs: v.value('timeout')! } : { countProcessing: true };
        return { ...common, kind: 'mirror', mirror: { ...this.mirror(), ...waited } };
      }
      case 'upload': {
        const mirror = this.mirror();
        const upload: UploadOptions = {
          ...mirror,
          playbook: v.value('playbook')!,
          name: v.value('name'),
          wait: v.value('noWait'),
          timeoutMs: v.value('timeout'),
          retryFailed: v.value('retryFailed'),
          policy: {
            reasons: { ...DEFAULT_RETRY_POLICY.reasons, ...v.value('retryReasons') },
            maxRounds: v.value('retryRounds') ?? DEFAULT_RETRY_POLICY.maxRounds,
            ocrFallback: v.value('ocrFallback'),
          },
        };
        return { ...common, kind: 'upload', mirror, upload, ack: v.value('ack') === true };
      }
    }
  }

  /** The settings a resumed run keeps, with its paths made absolute (a resume may run from elsewhere). */
  private record(): Form {
    const form: Form = { ...this.d };
    for (const s of jobSettings(this.job)) {
      const value = getPath(form, s.key);
      if ('isPath' in s.kind && typeof value === 'string') setPath(form, s.key, resolve(this.base ?? process.cwd(), value));
    }
    return resumeRecord(this.job, form);
  }

  /**
   * A mirror's options (an upload's too): every declared setting of the job by its value, as
   * MirrorOptions is derived from them; those that make something together (the lease, the window,
   * the filters) or belong to the run are made into it here.
   */
  private mirror(): MirrorOptions {
    const own = this.v.options(SENDING_SETTINGS);
    return {
      ...own,
      source: own.source!,
      project: own.project!,
      ...this.filters(),
      ...this.manifest(),
      metadata: this.metadata(),
      lock: this.lease(),
      limits: this.window(),
      record: this.record(),
    };
  }

  /** A pull's options: every declared setting of the job by its value (PullOptions is derived from them), the others made. */
  private pull(): PullOptions {
    const v = this.v;
    const own = v.options(JOB_SETTINGS.pull);
    const dir = own.dir!;
    if (own.manifestOut !== undefined) writableFile(v.name('manifestOut'), own.manifestOut);
    return {
      ...own,
      // Where the folder's file system is probed unless the rules were given (the default is auto).
      ...localFilesFrom({ localNames: v.given('localNames') ? own.localNames : undefined, overwriteChanged: own.overwriteChanged, backupDir: own.backupDir }, dir),
      project: own.pullProject!,
      dir,
      ...this.filters(),
      limits: this.window(),
    };
  }

  private migrate(): MigrateRequest {
    const v = this.v;
    const projects = v.value('projects');
    const playbooks = v.value('playbooks');
    const map = v.value('map');
    const shard = v.value('shard');
    const options: MigrateOptions = {
      ...(projects === 'all' ? { allProjects: true } : { projects: projects ?? [] }),
      ...(playbooks === 'all' ? { allPlaybooks: true } : { playbooks: playbooks ?? [] }),
      ...(shard !== undefined ? { shard: parseShard(shard) } : {}),
      sameTenant: v.value('sameTenant') === true,
      ...(map !== undefined ? { mapping: loadMapping(map) } : {}),
      intoExisting: v.value('intoExisting') === true,
      concurrency: v.value('concurrency'),
      ...(v.given('bwlimit') ? { bwlimit: v.value('bwlimit') } : {}),
      lock: this.lease(),
      limits: this.window(),
      ...(v.value('wait') ? { waitMs: v.value('timeout') } : {}),
      record: this.record(),
    };
    return { from: v.value('fromProfile')!, to: v.value('toProfile')!, options, verify: v.value('verify') === true };
  }

  /** The lease on the service (--wait-lock, --lock-ttl, --no-lock). */
  private lease(): LeaseSettings {
    const v = this.v;
    return {
      // Named as it was given: `--no-lock`, or a job file's `lock: false`.
      ...(v.value('lock') === false ? { off: v.name('lock').startsWith('--') ? v.name('lock') : `${v.name('lock')}: false` } : {}),
      ...(v.given('waitLock') ? { waitMs: v.value('waitLock') } : {}),
      ...(v.given('lockTtl') ? { ttlMs: v.value('lockTtl') } : {}),
    };
  }

  /** The run's window: exit 8 at a limit, the next run carries on. */
  private window(): LimitSettings | undefined {
    const v = this.v;
    const settings: LimitSettings = {
      ...(v.given('maxDuration') ? { maxDurationMs: v.value('maxDuration') } : {}),
      ...(v.given('maxTransfer') ? { maxTransfer: v.value('maxTransfer') } : {}),
      ...(v.given('maxFiles') ? { maxFiles: v.value('maxFiles') } : {}),
      cutoff: v.value('cutoffMode') === 'hard' ? 'hard' : 'soft',
    };
    return hasLimits(settings) ? settings : undefined;
  }

  /** Patterns, or a rules file (read now: one missing or wrong stops the job before it starts), and the size and age limits. */
  private filters(): Pick<MirrorOptions, 'include' | 'exclude' | 'rules'> & SizeAgeLimits {
    return filtersFrom(this.v);
  }

  /** The manifest of each file's metadata and settings (read where the source opens; its code page checked now). */
  private manifest(): Pick<MirrorOptions, 'manifestEncoding'> {
    const v = this.v;
    return v.given('manifestEncoding') ? { manifestEncoding: codePage(v.name('manifestEncoding'), v.value('manifestEncoding')!) } : {};
  }

  /** Metadata on every document; keys starting with `ferry.` are ferry's own. */
  private metadata(): Record<string, string> | undefined {
    const pairs = this.v.value('metadata');
    if (pairs === undefined || Object.keys(pairs).length === 0) return undefined;
    for (const [key, value] of Object.entries(pairs)) {
      if (OWN_METADATA.test(key)) this.v.reject(`${this.v.name('metadata')} "${visible(`${key}=${value}`)}": keys starting with "ferry." are ferry's own (the identity of each document, docs/cli.md); choose another key`);
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
