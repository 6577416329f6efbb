// Job definition files for `ferry run FILE` (cron): one YAML or JSON document per job, validated
// strictly so that every mistake is reported with the field it is in.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { z } from 'zod';
import { yaml, zod } from '../src/config/libraries.js';
import { ConfigurationError } from '../src/api/errors.js';
import { formatIssues } from '../src/config/profile.js';
import { isAge, parseDuration, parseSize } from '../src/runner/format.js';
import { readFilterFile } from '../src/config/filter-file.js';
import { MAX_LEASE_TTL_MS, MIN_LEASE_TTL_MS } from '../src/runner/lease.js';

export { parseDuration };
import type { MirrorOptions } from './mirror.js';
import { DEFAULT_RETRY_POLICY, type UploadOptions } from './upload.js';

const REASONS = ['outOfMemory', 'unsupportedFileType', 'badFile', 'uploadFailure', 'ocrPageLimitExceeded', 'unknownException', 'insufficientCredits', 'maliciousFile', 'fileScanTimedOut'] as const;

/** The job file's schema, built at its first use (../src/config/libraries.ts). */
function definitionSchema() {
  const { z } = zod();
  // A missing id is said to be required, not to be a malformed uuid.
  const uuid = z.uuid({ error: (issue) => (issue.input === undefined ? 'required' : 'must be a uuid') });

  const size = z.union([z.number().int().min(0).transform(String), z.string()]).refine((s) => !Number.isNaN(parseSize(s)), { message: 'must be a size like 500, 10K, 1.5M or 2G' });
  const age = z.string().refine(isAge, { message: 'must be an age like 90s, 30m, 12h, 7d or 2w' });

  const MirrorDefinition = z
    .object({
      job: z.literal('mirror'),
      /** Connection profile (else FERRY_PROFILE / the config file's default). */
      profile: z.string().min(1).optional(),
      /** Folder, zip or tar; relative paths are relative to the definition file. */
      source: z.string().min(1),
      project: uuid,
      to: z.string().optional(),
      include: z.array(z.string().min(1)).optional(),
      exclude: z.array(z.string().min(1)).optional(),
      /** A file of + and - rules (as --filter-from); relative to the definition file. */
      filterFrom: z.string().min(1).optional(),
      minSize: size.optional(),
      maxSize: size.optional(),
      minAge: age.optional(),
      maxAge: age.optional(),
      /** Most content bytes per second (as --bwlimit). */
      bwlimit: size.refine((s) => parseSize(s) > 0, { message: 'must be a rate above 0' }).optional(),
      concurrency: z.number().int().min(1).max(256).optional(),
      rps: z.number().positive().optional(),
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
      /** Checkpoint database; relative to the definition file. */
      state: z.string().min(1).optional(),
      /** The lease on the service (as --wait-lock, --lock-ttl, --no-lock: `lock: false`). */
      waitLock: z.string().regex(/^(\d+(ms|s|m|h))+$|^\d+$/, { message: 'must be a duration like 90s, 30m or 2h' }).optional(),
      lockTtl: z
        .string()
        .regex(/^(\d+(ms|s|m|h))+$|^\d+$/, { message: 'must be a duration like 30s or 2m' })
        .refine((t) => parseDuration(t) >= MIN_LEASE_TTL_MS && parseDuration(t) <= MAX_LEASE_TTL_MS, { message: 'must be from 2s to 1h' })
        .optional(),
      lock: z.boolean().optional(),
      /** The run's metrics (as --metrics-file, relative to the definition file; --pushgateway). */
      metricsFile: z.string().min(1).optional(),
      pushgateway: z.url({ protocol: /^https?$/ }).optional(),
    })
    .strict();

  const duration = z.string().regex(/^(\d+(ms|s|m|h))+$|^\d+$/, { message: 'must be a duration like 90s, 30m or 2h' });

  const UploadDefinition = MirrorDefinition.extend({
    job: z.literal('upload'),
    playbook: uuid,
    name: z.string().min(1).optional(),
    wait: z.boolean().optional(),
    timeout: duration.optional(),
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

  const Definition = z.discriminatedUnion('job', [MirrorDefinition, UploadDefinition]);
  return Definition;
}

let schema: ReturnType<typeof definitionSchema> | undefined;

export type JobDefinition = z.infer<ReturnType<typeof definitionSchema>>;

export interface LoadedDefinition {
  definition: JobDefinition;
  mirror: MirrorOptions;
  /** Present for `job: upload`. */
  upload?: UploadOptions;
  profile: string | undefined;
  rps: number | undefined;
  state: string | undefined;
  /** The run's metrics file (absolute) and Pushgateway, when the file names them. */
  metricsFile?: string | undefined;
  pushgateway?: string | undefined;
}

export function loadDefinition(path: string): LoadedDefinition {
  let raw: unknown;
  try {
    raw = yaml().parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigurationError(`cannot read job file ${path}: ${(err as Error).message}`);
  }
  if (!raw || typeof raw !== 'object' || !('job' in raw)) {
    throw new ConfigurationError(`job file ${path}: job: required, one of mirror, upload`);
  }
  schema ??= definitionSchema();
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ConfigurationError(`job file ${path}: ${formatIssues(parsed.error)}`);
  const d = parsed.data;
  if (d.filterFrom && (d.include?.length || d.exclude?.length)) throw new ConfigurationError(`job file ${path}: filterFrom cannot be given with include or exclude: put those in the filter file as + and - lines`);
  const here = dirname(resolve(path));
  const mirror: MirrorOptions = {
    source: resolve(here, d.source),
    project: d.project,
    to: d.to,
    include: d.include,
    exclude: d.exclude,
    // Read now: a filter file that is missing or wrong stops the job before it starts.
    ...(d.filterFrom ? { rules: readFilterFile(resolve(here, d.filterFrom), `job file ${path}: filterFrom ${d.filterFrom}`) } : {}),
    ...(d.minSize !== undefined ? { minSize: parseSize(d.minSize) } : {}),
    ...(d.maxSize !== undefined ? { maxSize: parseSize(d.maxSize) } : {}),
    ...(d.minAge !== undefined ? { minAgeMs: parseDuration(d.minAge) } : {}),
    ...(d.maxAge !== undefined ? { maxAgeMs: parseDuration(d.maxAge) } : {}),
    ...(d.bwlimit !== undefined ? { bwlimit: parseSize(d.bwlimit) } : {}),
    concurrency: d.concurrency,
    checksum: d.checksum,
    followSymlinks: d.followSymlinks,
    archiveEncoding: d.archiveEncoding,
    maxEntries: d.maxEntries,
    ocrEngine: d.ocr?.engine,
    ocrStrategy: d.ocr?.strategy,
    coordinateExtractionStrategy: d.coordinateExtraction,
    metadata: d.metadata,
    lock: {
      ...(d.lock === false ? { off: true } : {}),
      ...(d.waitLock !== undefined ? { waitMs: parseDuration(d.waitLock) } : {}),
      ...(d.lockTtl !== undefined ? { ttlMs: parseDuration(d.lockTtl) } : {}),
    },
  };
  const loaded: LoadedDefinition = {
    definition: d,
    profile: d.profile,
    rps: d.rps,
    state: d.state ? resolve(here, d.state) : undefined,
    mirror,
    ...(d.metricsFile ? { metricsFile: resolve(here, d.metricsFile) } : {}),
    ...(d.pushgateway ? { pushgateway: d.pushgateway } : {}),
  };
  if (d.job === 'upload') {
    loaded.upload = {
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
  }
  return loaded;
}
