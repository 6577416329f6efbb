// Job definition files for `ferry run FILE` (cron): one YAML or JSON document per job (a mirror,
// an upload, a pull, a playbooks backup or a migration), validated strictly so that every mistake
// is reported with the field it is in.
import { nearest } from '../src/nearest.js';
import { parseBandwidthLimit } from '../src/sync/bandwidth.js';
import { hasLimits, type LimitSettings } from '../src/runner/limits.js';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { z } from 'zod';
import { yaml, zod } from '../src/config/libraries.js';
import { ConfigurationError } from '../src/api/errors.js';
import { formatIssues } from '../src/config/profile.js';
import { isAge, parseDuration, parseSize } from '../src/runner/format.js';
import { DURATION_EXAMPLES, isDuration } from '../src/duration.js';
import { readFilterFile } from '../src/config/filter-file.js';
import { MAX_LEASE_TTL_MS, MIN_LEASE_TTL_MS } from '../src/runner/lease.js';

export { parseDuration };
import type { MirrorOptions } from './mirror.js';
import { DEFAULT_RETRY_POLICY, type UploadOptions } from './upload.js';
import { localFilesFrom, type PullOptions } from './pull.js';
import { LOCAL_NAMES } from '../src/backends/name-rules.js';
import type { BackupOptions } from './playbooks.js';
import type { MigrateOptions } from './migrate.js';
import type { LeaseSettings } from '../src/backends/project/lease-use.js';
import { loadMapping } from '../src/playbooks/mapping.js';
import { parseShard } from '../src/tenants/selection.js';
import { delimiterFlag } from '../src/manifest/flags.js';
import { codePage } from '../src/backends/archive-encoding.js';

const REASONS = ['outOfMemory', 'unsupportedFileType', 'badFile', 'uploadFailure', 'ocrPageLimitExceeded', 'unknownException', 'insufficientCredits', 'maliciousFile', 'fileScanTimedOut'] as const;

/** The kinds of job a file may describe, as `job:` names them. */
export const JOB_KINDS = ['mirror', 'upload', 'pull', 'playbooks-backup', 'migrate'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/** The job file's schema, built at its first use (../src/config/libraries.ts). */
function definitionSchema() {
  const { z } = zod();
  // A missing id is said to be required, not to be a malformed uuid.
  const uuid = z.uuid({ error: (issue) => (issue.input === undefined ? 'required' : 'must be a uuid') });

  const size = z.union([z.number().int().min(0).transform(String), z.string()]).refine((s) => !Number.isNaN(parseSize(s)), { message: 'must be a size like 500, 10K, 1.5M or 2G' });
  const age = z.string().refine(isAge, { message: 'must be an age like 90s, 30m, 12h, 7d or 2w' });
  const duration = z.string().refine(isDuration, { message: `must be a duration like ${DURATION_EXAMPLES}` });
  const count = z.number().int().min(0);

  /** Where every job keeps its state and says how it went. */
  const run = {
    /** Checkpoint database; relative to the definition file. */
    state: z.string().min(1).optional(),
    /** The run's metrics (as --metrics-file, relative to the definition file; --pushgateway). */
    metricsFile: z.string().min(1).optional(),
    pushgateway: z.url({ protocol: /^https?$/ }).optional(),
    /** A ping URL for the run's start and end (as --notify; a secret: never shown). */
    notify: z.url({ protocol: /^https?$/ }).optional(),
  };
  /** One tenant, named by a profile (else FERRY_PROFILE / the config file's default). */
  const tenant = {
    profile: z.string().min(1).optional(),
    /** Most requests per second, all calls together (as --rps). */
    rps: z.number().positive().optional(),
  };
  /** The lease on the service (as --wait-lock, --lock-ttl, --no-lock: `lock: false`). */
  const lease = {
    waitLock: duration.optional(),
    lockTtl: z
      .string()
      .refine(isDuration, { message: `must be a duration like ${DURATION_EXAMPLES}` })
      .refine((t) => parseDuration(t) >= MIN_LEASE_TTL_MS && parseDuration(t) <= MAX_LEASE_TTL_MS, { message: 'must be from 2s to 1h' })
      .optional(),
    lock: z.boolean().optional(),
  };
  /** Which entries, as the flags' rclone habits say it. */
  const filters = {
    include: z.array(z.string().min(1)).optional(),
    exclude: z.array(z.string().min(1)).optional(),
    /** A file of + and - rules (as --filter-from); relative to the definition file. */
    filterFrom: z.string().min(1).optional(),
    minSize: size.optional(),
    maxSize: size.optional(),
    minAge: age.optional(),
    maxAge: age.optional(),
  };
  const transfer = {
    /** Most content bytes per second (as --bwlimit). */
    /** A rate, or a timetable as rclone writes it ("08:00,512k 19:00,off"). */
    bwlimit: z
      .string()
      .refine((s) => readable(() => parseBandwidthLimit(s, parseSize)), { message: 'must be a rate above 0, or a timetable like "08:00,512k 19:00,off"' })
      .optional(),
    concurrency: z.number().int().min(1).max(256).optional(),
    /** The run's window (as --max-duration, --max-transfer, --max-files, --cutoff-mode): exit 8, the next run carries on. */
    maxDuration: duration.refine((t) => parseDuration(t) > 0, { message: 'must be a duration above 0' }).optional(),
    maxTransfer: size.refine((s) => parseSize(s) > 0, { message: 'must be a size above 0' }).optional(),
    maxFiles: z.number().int().min(1).optional(),
    cutoffMode: z.enum(['soft', 'hard']).optional(),
  };
  /** After the uploads, wait for the service's processing (as --wait, --timeout). */
  const processing = { wait: z.boolean().optional(), timeout: duration.optional() };

  const MirrorDefinition = z
    .object({
      job: z.literal('mirror'),
      ...tenant,
      ...run,
      ...lease,
      ...filters,
      ...transfer,
      ...processing,
      /** Folder, zip or tar; relative paths are relative to the definition file. */
      source: z.string().min(1),
      project: uuid,
      to: z.string().optional(),
      checksum: z.boolean().optional(),
      followSymlinks: z.boolean().optional(),
      /** The code page of archive names that do not say (as --archive-encoding); checked when the source opens. */
      archiveEncoding: z.string().min(1).optional(),
      /** The most entries an archive may hold (as --max-entries). */
      maxEntries: z.number().int().positive().optional(),
      ocr: z
        .object({
          engine: z.enum(['cloudDocumentIntelligence', 'engineA']).optional(),
          strategy: z.enum(['never', 'detect', 'always']).optional(),
        })
        .strict()
        .optional(),
      coordinateExtraction: z.enum(['never', 'engineB', 'cloudDocumentIntelligence', 'spreadsheet']).optional(),
      metadata: z.record(z.string(), z.string()).optional(),
      /** Each file's own metadata and settings (as --manifest); relative to the definition file. */
      manifest: z.string().min(1).optional(),
      manifestDelimiter: z.enum([',', ';', '|', 'tab']).optional(),
      /** Go on when no row names a file of the folder (as --manifest-partial). */
      manifestPartial: z.boolean().optional(),
      /** The manifest CSV's code page when it is not UTF-8 (as --manifest-encoding). */
      manifestEncoding: z.string().min(1).optional(),
      /** The sheet of an .xlsx manifest (as --manifest-sheet). */
      manifestSheet: z.string().min(1).optional(),
    })
    .strict();

  const UploadDefinition = MirrorDefinition.extend({
    job: z.literal('upload'),
    playbook: uuid,
    name: z.string().min(1).optional(),
    retryFailed: z.boolean().optional(),
    /** Overrides of the default retry policy (docs/cli.md). */
    retryPolicy: z
      .object({
        reasons: z.partialRecord(z.enum(REASONS), z.enum(['retry', 'never', 'fallback', 'stop'])).optional(),
        maxRounds: z.number().int().min(0).max(10).optional(),
        ocrFallback: z.enum(['never', 'detect']).optional(),
      })
      .strict()
      .optional(),
    ack: z.boolean().optional(),
  }).strict();

  const PullDefinition = z
    .object({
      job: z.literal('pull'),
      ...tenant,
      ...run,
      ...filters,
      ...transfer,
      project: uuid,
      /** The local folder (created when missing); relative to the definition file. */
      dir: z.string().min(1),
      /** Only this folder of the project (as --from). */
      from: z.string().min(1).optional(),
      /** Write the manifest of the pulled files' metadata (as --manifest-out); relative to the definition file. */
      manifestOut: z.string().min(1).optional(),
      /** The rules local names are written by (as --local-names). */
      localNames: z.enum(LOCAL_NAMES).optional(),
      /** Replace a pulled file changed here since (as --overwrite-changed). */
      overwriteChanged: z.boolean().optional(),
      /** Where replaced files are moved first (as --backup-dir); relative to the definition file. */
      backupDir: z.string().min(1).optional(),
    })
    .strict();

  const BackupDefinition = z
    .object({
      job: z.literal('playbooks-backup'),
      ...tenant,
      ...run,
      ...lease,
      /** The backup folder; relative to the definition file. */
      out: z.string().min(1),
      keep: count.optional(),
      keepDaily: count.optional(),
      keepWeekly: count.optional(),
    })
    .strict();

  const selection = z.union([z.literal('all'), z.array(uuid).min(1)]);
  const MigrateDefinition = z
    .object({
      job: z.literal('migrate'),
      ...run,
      ...lease,
      ...transfer,
      ...processing,
      /** The source and target tenants, as profiles of the config file (each with its own rps). */
      from: z.string().min(1),
      to: z.string().min(1),
      /** Project ids, or `all` (as --projects, --all-projects). */
      projects: selection.optional(),
      playbooks: selection.optional(),
      /** A --map file; relative to the definition file. */
      map: z.string().min(1).optional(),
      intoExisting: z.boolean().optional(),
      verify: z.boolean().optional(),
      shard: z.string().regex(/^\d+\/\d+$/, { message: 'must be K/N, like 2/3' }).optional(),
      sameTenant: z.boolean().optional(),
    })
    .strict()
    .refine((d) => d.projects !== undefined || d.playbooks !== undefined, { message: 'name projects or playbooks (ids, or all)', path: ['projects'] });

  return z.discriminatedUnion('job', [MirrorDefinition, UploadDefinition, PullDefinition, BackupDefinition, MigrateDefinition]);
}

let schema: ReturnType<typeof definitionSchema> | undefined;

export type JobDefinition = z.infer<ReturnType<typeof definitionSchema>>;

/** What a migrate job file asks, in the command line's terms (src/cli/actions/migrate.ts runs it). */
export interface MigrateRequest {
  from: string;
  to: string;
  options: MigrateOptions;
  verify: boolean;
}

/** A job file, read and checked: the options of its one job, and where its run keeps state and metrics. */
export type LoadedDefinition = {
  definition: JobDefinition;
  /** The profile the job's client uses (a migration: the target's). */
  profile: string | undefined;
  rps: number | undefined;
  state: string | undefined;
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

export function loadDefinition(path: string): LoadedDefinition {
  let raw: unknown;
  try {
    raw = yaml().parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigurationError(`cannot read job file ${path}: ${(err as Error).message}`);
  }
  const kind = raw && typeof raw === 'object' && 'job' in raw ? (raw as { job: unknown }).job : undefined;
  if (kind === undefined) throw new ConfigurationError(`job file ${path}: job: required, one of ${JOB_KINDS.join(', ')}`);
  if (!(JOB_KINDS as readonly unknown[]).includes(kind)) {
    throw new ConfigurationError(`job file ${path}: job: ${JSON.stringify(kind)} is not a kind of job; one of ${JOB_KINDS.join(', ')}`);
  }
  schema ??= definitionSchema();
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ConfigurationError(`job file ${path}: ${formatIssues(parsed.error)}${keyHint(schema, kind as string, parsed.error)}`);
  const d = parsed.data;
  const here = dirname(resolve(path));
  const common = {
    definition: d,
    state: d.state ? resolve(here, d.state) : undefined,
    ...(d.metricsFile ? { metricsFile: resolve(here, d.metricsFile) } : {}),
    ...(d.pushgateway ? { pushgateway: d.pushgateway } : {}),
    ...(d.notify ? { notify: d.notify } : {}),
  };
  if (d.job === 'migrate') return { ...common, kind: 'migrate', profile: d.to, rps: undefined, migrate: migrateRequest(d, here) };
  if (d.job === 'playbooks-backup') {
    return { ...common, kind: 'playbooks-backup', profile: d.profile, rps: d.rps, backup: { out: resolve(here, d.out), keep: d.keep, keepDaily: d.keepDaily, keepWeekly: d.keepWeekly, lock: leaseOf(d) } };
  }
  const limits = filtersOf(d, path, here);
  if (d.job === 'pull') {
    const pull: PullOptions = {
      ...localFilesFrom({ localNames: d.localNames, overwriteChanged: d.overwriteChanged, backupDir: d.backupDir !== undefined ? resolve(here, d.backupDir) : undefined }, resolve(here, d.dir)),
      project: d.project, dir: resolve(here, d.dir), from: d.from, ...(d.manifestOut ? { manifestOut: resolve(here, d.manifestOut) } : {}), ...limits, ...(d.bwlimit !== undefined ? { bwlimit: parseBandwidthLimit(d.bwlimit, parseSize) } : {}), concurrency: d.concurrency, limits: windowOf(d) };
    return { ...common, kind: 'pull', profile: d.profile, rps: d.rps, pull };
  }
  const mirror: MirrorOptions = {
    source: resolve(here, d.source),
    project: d.project,
    to: d.to,
    ...limits,
    ...(d.bwlimit !== undefined ? { bwlimit: parseBandwidthLimit(d.bwlimit, parseSize) } : {}),
    concurrency: d.concurrency,
    checksum: d.checksum,
    followSymlinks: d.followSymlinks,
    archiveEncoding: d.archiveEncoding,
    maxEntries: d.maxEntries,
    ocrEngine: d.ocr?.engine,
    ocrStrategy: d.ocr?.strategy,
    coordinateExtractionStrategy: d.coordinateExtraction,
    metadata: d.metadata,
    ...(d.manifest ? { manifest: resolve(here, d.manifest) } : {}),
    ...(d.manifestDelimiter ? { manifestDelimiter: delimiterFlag(d.manifestDelimiter) } : {}),
    ...(d.manifestPartial ? { manifestPartial: true } : {}),
    ...(d.manifestEncoding ? { manifestEncoding: codePage('manifestEncoding', d.manifestEncoding) } : {}),
    ...(d.manifestSheet ? { manifestSheet: d.manifestSheet } : {}),
    lock: leaseOf(d),
    limits: windowOf(d),
  };
  if (d.job === 'mirror') {
    // As on the command line: --wait waits for processing; without it, what is still processing is counted.
    const waited = d.wait ? { waitMs: parseDuration(d.timeout ?? '1h') } : { countProcessing: true };
    return { ...common, kind: 'mirror', profile: d.profile, rps: d.rps, mirror: { ...mirror, ...waited } };
  }
  const upload: UploadOptions = {
    ...mirror,
    playbook: d.playbook,
    name: d.name,
    wait: d.wait,
    timeoutMs: d.timeout ? parseDuration(d.timeout) : undefined,
    retryFailed: d.retryFailed,
    policy: {
      reasons: { ...DEFAULT_RETRY_POLICY.reasons, ...d.retryPolicy?.reasons },
      maxRounds: d.retryPolicy?.maxRounds ?? DEFAULT_RETRY_POLICY.maxRounds,
      ocrFallback: d.retryPolicy?.ocrFallback,
    },
  };
  return { ...common, kind: 'upload', profile: d.profile, rps: d.rps, mirror, upload, ack: d.ack === true };
}

type Definition<K extends JobKind> = Extract<JobDefinition, { job: K }>;

function readable(read: () => unknown): boolean {
  try {
    read();
    return true;
  } catch {
    return false;
  }
}

function windowOf(d: { maxDuration?: string | undefined; maxTransfer?: string | undefined; maxFiles?: number | undefined; cutoffMode?: 'soft' | 'hard' | undefined }): LimitSettings | undefined {
  const settings: LimitSettings = {
    ...(d.maxDuration !== undefined ? { maxDurationMs: parseDuration(d.maxDuration) } : {}),
    ...(d.maxTransfer !== undefined ? { maxTransfer: parseSize(d.maxTransfer) } : {}),
    ...(d.maxFiles !== undefined ? { maxFiles: d.maxFiles } : {}),
    cutoff: d.cutoffMode ?? 'soft',
  };
  return hasLimits(settings) ? settings : undefined;
}

function leaseOf(d: { lock?: boolean | undefined; waitLock?: string | undefined; lockTtl?: string | undefined }): LeaseSettings {
  return {
    ...(d.lock === false ? { off: true } : {}),
    ...(d.waitLock !== undefined ? { waitMs: parseDuration(d.waitLock) } : {}),
    ...(d.lockTtl !== undefined ? { ttlMs: parseDuration(d.lockTtl) } : {}),
  };
}

/** Patterns, a rules file (read now: one missing or wrong stops the job before it starts), size and age limits. */
function filtersOf(d: Definition<'mirror' | 'upload' | 'pull'>, path: string, here: string): Pick<MirrorOptions, 'include' | 'exclude' | 'rules' | 'minSize' | 'maxSize' | 'minAgeMs' | 'maxAgeMs'> {
  if (d.filterFrom && (d.include?.length || d.exclude?.length)) throw new ConfigurationError(`job file ${path}: filterFrom cannot be given with include or exclude: put those in the filter file as + and - lines`);
  return {
    include: d.include,
    exclude: d.exclude,
    ...(d.filterFrom ? { rules: readFilterFile(resolve(here, d.filterFrom), `job file ${path}: filterFrom ${d.filterFrom}`) } : {}),
    ...(d.minSize !== undefined ? { minSize: parseSize(d.minSize) } : {}),
    ...(d.maxSize !== undefined ? { maxSize: parseSize(d.maxSize) } : {}),
    ...(d.minAge !== undefined ? { minAgeMs: parseDuration(d.minAge) } : {}),
    ...(d.maxAge !== undefined ? { maxAgeMs: parseDuration(d.maxAge) } : {}),
  };
}

function migrateRequest(d: Definition<'migrate'>, here: string): MigrateRequest {
  const options: MigrateOptions = {
    ...(d.projects === 'all' ? { allProjects: true } : { projects: d.projects ?? [] }),
    ...(d.playbooks === 'all' ? { allPlaybooks: true } : { playbooks: d.playbooks ?? [] }),
    ...(d.shard ? { shard: parseShard(d.shard) } : {}),
    sameTenant: d.sameTenant === true,
    ...(d.map ? { mapping: loadMapping(resolve(here, d.map)) } : {}),
    intoExisting: d.intoExisting === true,
    concurrency: d.concurrency,
    ...(d.bwlimit !== undefined ? { bwlimit: parseBandwidthLimit(d.bwlimit, parseSize) } : {}),
    lock: leaseOf(d),
    limits: windowOf(d),
    ...(d.wait ? { waitMs: parseDuration(d.timeout ?? '1h') } : {}),
  };
  return { from: d.from, to: d.to, options, verify: d.verify === true };
}

/** For a key no setting of this kind declares: the declared key nearest it, as a mistyped flag is told. */
function keyHint(schema: ReturnType<typeof definitionSchema>, kind: string, error: z.ZodError): string {
  const option = schema.options.find((o) => o.shape.job.value === kind);
  if (!option) return '';
  const declared = Object.keys(option.shape);
  const hints = error.issues
    .filter((i) => i.code === 'unrecognized_keys' && i.path.length === 0)
    .flatMap((i) => (i as { keys: string[] }).keys)
    .map((key) => {
      const near = nearest(key, declared);
      return near ? ` (did you mean ${near}?)` : ` ("${key}" is no setting of a ${kind} job: the keys are in docs/cli.md under ferry run FILE)`;
    });
  return hints.join('');
}
