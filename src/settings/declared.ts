// Every setting of ferry's jobs, declared once: its flag, its job-file key, its kind of value, its
// default and range, its help, and whether a resumed run keeps it. The commander options
// (src/cli/settings-flags.ts), the job-file schema (schema.ts), completion (from the commander
// tree), the option tables of docs/cli.md (src/cli/option-tables.ts) and the resume record
// (resume.ts) are all made from these. Light: no zod, no commander.
import * as k from './kinds.js';
import type { FormValue, Kind } from './kinds.js';
import { DEFAULT_CONCURRENCY } from '../runner/adaptive.js';
import { LOCAL_NAMES } from '../backends/name-rules.js';
import { DEFAULT_ARCHIVE_LIMITS } from '../backends/archive-guards.js';
import { DEFAULT_LEASE_TTL_MS, MAX_LEASE_TTL_MS, MIN_LEASE_TTL_MS } from '../runner/lease/protocol.js';
import { DEFAULT_STATS_MS } from '../runner/progress.js';
import { durationText } from '../duration.js';

export interface Range {
  min?: number;
  max?: number;
  /** The range in words, as help and a job file's error say it: "from 2s to 1h", "above 0". */
  words: string;
  /** What a flag's value out of it is, when "outside <words>" reads badly: "no time at all". */
  said?: string;
  /** Why, or what to give instead. */
  why?: string;
}

export interface Setting {
  /** The job file's key; a dotted path for the nested keys older job files use (`ocr.engine`). */
  key: string;
  /** The flag, without its argument (`--max-duration`). None: a job file's only, or a global flag (`elsewhere`). */
  flag?: string;
  short?: string;
  kind: Kind;
  /** The kind in a job file, where it differs (a job file names its project by id, the command line by id or name). */
  jobKind?: Kind;
  help: string;
  /** The default as written: help and docs show it, and a job applies it. */
  default?: string;
  /** What happens when it is not given, in words, where that is no value (`--to`: the root). */
  unset?: string;
  range?: Range;
  /**
   * A resumed run (`ferry jobs resume`) keeps it, where its job kind resumes at all (RESUMABLE_JOBS;
   * keptOnResume says both); the others are the resuming command's own.
   */
  resume: boolean;
  /** The flag stands for this job-file value (`--all-projects` is `projects: all`). */
  asForm?: FormValue;
  /** `--no-X`: the flag turns off what is on unless told. */
  negates?: boolean;
  required?: boolean;
  hidden?: boolean;
  /** Where the setting comes from when not from a flag of the command: a global flag, a profile key. */
  elsewhere?: string;
  /** How the command's run shows its result (--json, --dry-run): a flag of `ferry run FILE`, not a key of the file. */
  runFlag?: boolean;
}

const SECOND = 1000;

const lease = {
  waitLock: { key: 'waitLock', flag: '--wait-lock', kind: k.duration, help: 'wait this long for another run to release the lease of the place it writes', unset: 'no wait, exit 4', resume: false },
  lockTtl: { key: 'lockTtl', flag: '--lock-ttl', kind: k.duration, help: 'how long the lease outlives its last renewal if this run dies', default: durationText(DEFAULT_LEASE_TTL_MS), range: { min: MIN_LEASE_TTL_MS, max: MAX_LEASE_TTL_MS, words: `from ${durationText(MIN_LEASE_TTL_MS)} to ${durationText(MAX_LEASE_TTL_MS)}`, said: `outside ${durationText(MIN_LEASE_TTL_MS)} to ${durationText(MAX_LEASE_TTL_MS)}`, why: 'the lease is renewed every quarter of its TTL, and a run that dies blocks the next for as long' }, resume: false },
  lock: { key: 'lock', flag: '--no-lock', kind: k.onOff, negates: true, help: 'hold no lease on the service: only for one who knows no other run writes here (said in the summary)', resume: false },
} satisfies Record<string, Setting>;

const window = {
  maxDuration: { key: 'maxDuration', flag: '--max-duration', kind: k.duration, help: 'start nothing new this long after the run began (e.g. 6h); exit 8, the next run carries on', range: { min: 1, words: 'above 0', said: 'no time at all', why: 'give a duration above 0, like 6h' }, resume: false },
  maxTransfer: { key: 'maxTransfer', flag: '--max-transfer', kind: k.size, help: 'start nothing new once this much content has been started (e.g. 750G); exit 8', range: { min: 1, words: 'above 0', said: 'nothing at all', why: 'give a size above 0, like 750G' }, resume: false },
  maxFiles: { key: 'maxFiles', flag: '--max-files', kind: k.count(1), help: 'start at most this many files; exit 8 when more were left', resume: false },
  cutoffMode: { key: 'cutoffMode', flag: '--cutoff-mode', kind: k.choice(['soft', 'hard'] as const, '<mode>'), help: 'at a limit: soft lets transfers in flight finish, hard cuts them off for the next run to settle', default: 'soft', resume: false },
} satisfies Record<string, Setting>;

const patterns = {
  include: { key: 'include', flag: '--include', kind: k.list, help: 'only paths matching (repeatable; globs: * within a folder, ** across folders)', resume: true },
  exclude: { key: 'exclude', flag: '--exclude', kind: k.list, help: 'leave out paths matching, and all a matching folder holds (repeatable)', resume: true },
  filterFrom: { key: 'filterFrom', flag: '--filter-from', kind: k.path, help: 'rules from a file, one per line: "+ GLOB" takes, "- GLOB" leaves out; the first that matches decides', resume: true },
} satisfies Record<string, Setting>;

const sizeAge = {
  minSize: { key: 'minSize', flag: '--min-size', kind: k.size, help: 'leave alone files smaller than this (500, 10K, 1.5M, 2G)', resume: true },
  maxSize: { key: 'maxSize', flag: '--max-size', kind: k.size, help: 'leave alone files larger than this', resume: true },
  minAge: { key: 'minAge', flag: '--min-age', kind: k.age, help: 'leave alone files changed less than this long ago (90s, 30m, 12h, 7d, 2w)', resume: true },
  maxAge: { key: 'maxAge', flag: '--max-age', kind: k.age, help: 'leave alone files changed longer ago than this', resume: true },
} satisfies Record<string, Setting>;

const archive = {
  archiveEncoding: { key: 'archiveEncoding', flag: '--archive-encoding', kind: k.words('<name>'), help: "code page of archive names that do not say (Windows Explorer's zips: cp437, cp850, cp932…); see docs/cli.md", resume: true },
  stripComponents: { key: 'stripComponents', flag: '--strip-components', kind: k.count(1), help: "take this many leading folders off each archive entry's path, as tar does (an archive whose entries sit under one folder the sheet's rows lack); not with --include, --exclude or --filter-from", unset: 'paths as the archive holds them', resume: true },
  maxEntries: { key: 'maxEntries', flag: '--max-entries', kind: k.count(1), help: 'refuse an archive of more entries than this', default: String(DEFAULT_ARCHIVE_LIMITS.maxEntries), resume: true },
} satisfies Record<string, Setting>;

const manifest = {
  manifest: { key: 'manifest', flag: '--manifest', kind: k.path, help: "each file's own metadata and processing settings: a CSV (as Excel saves it), an .xlsx workbook or a JSON Lines file with a path column; see docs/cli.md", resume: true },
  manifestDelimiter: { key: 'manifestDelimiter', flag: '--manifest-delimiter', kind: k.delimiter, help: "the manifest CSV's separator when its header does not tell: , ; | or tab", resume: true },
  manifestEncoding: { key: 'manifestEncoding', flag: '--manifest-encoding', kind: k.words('<name>'), help: "the manifest CSV's code page when it is not UTF-8 (old Excel's \"CSV (Comma delimited)\": windows-1252, cp850…)", resume: true },
  manifestSheet: { key: 'manifestSheet', flag: '--manifest-sheet', kind: k.words('<name>'), help: 'the sheet of an .xlsx manifest to read (the first when not given)', resume: true },
  manifestPartial: { key: 'manifestPartial', flag: '--manifest-partial', kind: k.onOff, help: 'go on when no row of the manifest names a file of the folder (each file without a row goes up without its metadata)', resume: true },
} satisfies Record<string, Setting>;

/** How the run keeps its state and shows its result. */
const run = {
  state: { key: 'state', flag: '--state', kind: { ...k.path, arg: '<file>' }, help: 'checkpoint database', unset: "the profile's, under FERRY_STATE_DIR or $XDG_STATE_HOME/ferry, the target profile's for a migration", resume: false },
  stats: { key: 'stats', flag: '--stats', kind: k.duration, help: 'off a terminal, write a progress record this often (e.g. 10s, 5m)', default: durationText(DEFAULT_STATS_MS), range: { min: SECOND, words: 'at least 1s', said: 'shorter than a second' }, resume: false },
  json: { key: 'json', flag: '--json', kind: k.onOff, help: 'print one JSON summary on stdout at the end', resume: false, runFlag: true },
  dryRun: { key: 'dryRun', flag: '--dry-run', short: '-n', kind: k.onOff, help: 'print the plan and touch nothing', resume: false, runFlag: true },
  rps: { key: 'rps', flag: '--rps', kind: k.positive, help: 'most requests per second, all calls together', unset: "the profile's requestsPerSecond", resume: false },
  profile: { key: 'profile', kind: k.words('<name>'), help: 'the profile of the tenant (else FERRY_PROFILE, else the config file default)', elsewhere: '-p, --profile', resume: false },
  metricsFile: { key: 'metricsFile', kind: k.path, help: "the run's Prometheus metrics, written to this file", elsewhere: '--metrics-file', resume: false },
  pushgateway: { key: 'pushgateway', kind: k.url, help: "the Pushgateway the run's metrics are pushed to at the end", elsewhere: '--pushgateway', resume: false },
  notify: { key: 'notify', kind: k.url, help: 'a ping URL for the start and end of the run (a secret: never shown)', elsewhere: '--notify', resume: false },
} satisfies Record<string, Setting>;

const flow = {
  concurrency: { key: 'concurrency', flag: '--concurrency', kind: k.count(1), help: 'most transfers at once (adapts down when the service pushes back)', default: String(DEFAULT_CONCURRENCY), range: { min: 1, max: 256, words: 'from 1 to 256' }, resume: true },
  bwlimit: { key: 'bwlimit', flag: '--bwlimit', kind: k.rate, help: 'most content bytes per second, every transfer of the run together (e.g. 500K, 10M; or a timetable, "08:00,512k 19:00,off")', resume: true },
} satisfies Record<string, Setting>;

/** How long a run waits for the service's processing unless --timeout says (a job given options in code too). */
export const DEFAULT_PROCESSING_WAIT_MS = 3_600_000;

/** After the writes, wait for the service's processing. */
const processing = {
  wait: { key: 'wait', flag: '--wait', kind: k.onOff, help: "after the writes, wait for the service to process this run's documents and name each it refused (exit 1)", resume: true },
  timeout: { key: 'timeout', flag: '--timeout', kind: k.duration, help: 'the longest wait for processing (then exit 5)', default: durationText(DEFAULT_PROCESSING_WAIT_MS), resume: true },
} satisfies Record<string, Setting>;

const OCR_ENGINES = ['cloudDocumentIntelligence', 'engineA'] as const;
const OCR_STRATEGIES = ['never', 'detect', 'always'] as const;
const COORDINATE_STRATEGIES = ['never', 'engineB', 'cloudDocumentIntelligence', 'spreadsheet'] as const;

const sending = {
  source: { key: 'source', kind: k.path, help: 'a folder, or a zip or tar (.tar, .tar.gz) read in place', elsewhere: 'SOURCE', required: true, resume: true },
  project: { key: 'project', flag: '--project', kind: k.project, required: true, help: 'the project the documents go to: its id, or its name', resume: true },
  to: { key: 'to', flag: '--to', kind: k.words('<folder>'), help: 'the folder under the project root', unset: 'the root', resume: true },
  checksum: { key: 'checksum', flag: '--checksum', kind: k.onOff, help: 'compare files by sha256 instead of size and modification time', resume: true },
  resync: { key: 'resync', flag: '--resync', kind: k.onOff, help: 'list the project first and adopt what is there, whatever the checkpoint store remembers', resume: true },
  followSymlinks: { key: 'followSymlinks', flag: '--follow-symlinks', kind: k.onOff, help: 'upload symlinked files that point inside SOURCE (folders are never followed)', resume: true },
  ocrEngine: { key: 'ocr.engine', flag: '--ocr-engine', kind: k.choice(OCR_ENGINES, '<engine>'), help: 'OCR engine for every document', resume: true },
  ocrStrategy: { key: 'ocr.strategy', flag: '--ocr-strategy', kind: k.choice(OCR_STRATEGIES, '<strategy>'), help: 'OCR strategy for every document', resume: true },
  coordinateExtractionStrategy: { key: 'coordinateExtraction', flag: '--coordinate-extraction', kind: k.choice(COORDINATE_STRATEGIES, '<strategy>'), help: 'coordinate extraction strategy for every document', resume: true },
  metadata: { key: 'metadata', flag: '--metadata', kind: k.pairs, help: 'metadata on every document (repeatable)', resume: true },
} satisfies Record<string, Setting>;

const batch = {
  playbook: { key: 'playbook', flag: '--playbook', kind: k.uuid, required: true, help: 'the playbook the batch belongs to', resume: true },
  name: { key: 'name', flag: '--name', kind: k.words('<name>'), help: 'name of the batch', unset: 'the folder name and the date', resume: true },
  noWait: { key: 'wait', flag: '--no-wait', kind: k.onOff, negates: true, help: 'mark the batch complete and return without waiting for processing', resume: true },
  retryFailed: { key: 'retryFailed', flag: '--retry-failed', kind: k.onOff, help: 'upload files that failed for transient reasons again, into new batches (see docs/cli.md for the policy)', resume: true },
  ocrFallback: { key: 'retryPolicy.ocrFallback', flag: '--ocr-fallback', kind: k.choice(['never', 'detect'] as const, '<strategy>'), help: 'retry ocrPageLimitExceeded files with this OCR strategy', resume: true },
  retryReasons: { key: 'retryPolicy.reasons', kind: k.mappingTo(['retry', 'never', 'fallback', 'stop'] as const, '<mapping>', 'a mapping of failure reasons to retry, never, fallback or stop'), help: 'the retry policy by failure reason: retry, never, fallback or stop (docs/cli.md)', elsewhere: '(job file only)', resume: true },
  retryRounds: { key: 'retryPolicy.maxRounds', kind: k.count(0), range: { min: 0, max: 10, words: 'from 0 to 10' }, help: 'the most retry rounds', elsewhere: '(job file only)', resume: true },
  ack: { key: 'ack', flag: '--ack', kind: k.onOff, help: "mark the service's notifications about the batch read", resume: true },
} satisfies Record<string, Setting>;

const pulling = {
  pullProject: { key: 'project', kind: k.project, required: true, help: 'the project: its id, or its name', elsewhere: 'PROJECT', resume: true },
  dir: { key: 'dir', kind: k.path, required: true, help: 'the local folder (created when missing)', elsewhere: 'DIR', resume: true },
  from: { key: 'from', flag: '--from', kind: k.words('<folder>'), help: 'only this folder of the project (path under its root)', resume: true },
  localNames: { key: 'localNames', flag: '--local-names', kind: k.choice(LOCAL_NAMES, '<rules>'), help: 'the rules local names are written by: auto probes DIR, windows maps what NTFS, exFAT and SMB shares refuse, posix writes names as they are', default: 'auto', resume: true },
  overwriteChanged: { key: 'overwriteChanged', flag: '--overwrite-changed', kind: k.onOff, help: "replace a pulled file changed here since with the project's version", unset: 'keep it, name it, exit 1', resume: true },
  ignoreChecksum: { key: 'ignoreChecksum', flag: '--ignore-checksum', kind: k.onOff, help: "do not check the bytes received against the sha256 each document carries (as rclone's flag)", unset: 'every download checked, fetched once more on a mismatch', resume: true },
  backupDir: { key: 'backupDir', flag: '--backup-dir', kind: { ...k.path, arg: '<dir>' }, help: 'with --overwrite-changed: move each replaced file here first, by its path under DIR', resume: true },
  manifestOut: { key: 'manifestOut', flag: '--manifest-out', kind: { ...k.path, arg: '<file>' }, help: "write a manifest (a CSV as Excel opens it, or an .xlsx: path, then one column per metadata key) that gives the pulled files' documents the same metadata again with mirror --manifest", resume: true },
} satisfies Record<string, Setting>;

const migrating = {
  fromProfile: { key: 'from', flag: '--from', kind: k.words('<profile>'), required: true, help: 'the profile of the source tenant', resume: true },
  toProfile: { key: 'to', flag: '--to', kind: k.words('<profile>'), required: true, help: 'the profile of the target tenant', resume: true },
  projects: { key: 'projects', flag: '--projects', kind: k.ids, help: 'these projects (comma-separated ids or names; a job file: a list, or all)', resume: true },
  allProjects: { key: 'projects', flag: '--all-projects', kind: k.onOff, asForm: 'all', help: 'every project the source application can see', resume: true },
  playbooks: { key: 'playbooks', flag: '--playbooks', kind: k.ids, help: 'these playbooks (comma-separated ids or names; a job file: a list, or all)', resume: true },
  allPlaybooks: { key: 'playbooks', flag: '--all-playbooks', kind: k.onOff, asForm: 'all', help: 'every playbook of the source organization', resume: true },
  shard: { key: 'shard', flag: '--shard', kind: k.shard, help: "only this process's share of the selection, by project and playbook (K of N; N processes split it exactly)", resume: true },
  sameTenant: { key: 'sameTenant', flag: '--same-tenant', kind: k.onOff, help: 'allow --from and --to to be the same tenant (a copy inside one tenant)', resume: true },
  map: { key: 'map', flag: '--map', kind: { ...k.path, arg: '<file>' }, help: 'target ids for organization metadata (and options), by source id or name (YAML)', resume: true },
  intoExisting: { key: 'intoExisting', flag: '--into-existing', kind: k.onOff, help: 'copy into a same-named target project that no earlier migration of it made (otherwise the run stops and names it)', resume: true },
  verify: { key: 'verify', flag: '--verify', kind: k.onOff, help: 'after the migration, compare source and target; exit 1 on any difference', resume: true },
} satisfies Record<string, Setting>;

const backup = {
  out: { key: 'out', flag: '--out', kind: { ...k.path, arg: '<dir>' }, required: true, help: 'the backup folder (holds index.json and one folder per playbook)', resume: true },
  keep: { key: 'keep', flag: '--keep', kind: k.count(0), help: 'keep the newest n archives of each playbook', resume: true },
  keepDaily: { key: 'keepDaily', flag: '--keep-daily', kind: k.count(0), help: 'keep the newest archive of each of the last n days', resume: true },
  keepWeekly: { key: 'keepWeekly', flag: '--keep-weekly', kind: k.count(0), help: 'keep the newest archive of each of the last n ISO weeks', resume: true },
} satisfies Record<string, Setting>;

/** Every setting, by the name the code reads it under: the field of a job's options it fills. */
const ALL = { ...lease, ...window, ...patterns, ...sizeAge, ...archive, ...manifest, ...run, ...flow, ...processing, ...sending, ...batch, ...pulling, ...migrating, ...backup } satisfies Record<string, Setting>;
export type SettingName = keyof typeof ALL;
export const SETTINGS: Record<SettingName, Setting> = ALL;
/** A setting's value as the code uses it: what its kind yields (a duration in ms, a size in bytes, a rate its timetable). */
export type ValueOf<N extends SettingName> = (typeof ALL)[N]['kind'] extends Kind<infer T> ? T : never;
/** The values of some settings, by name: a job's options are these and what they make together. */
export type Values<Ns extends readonly SettingName[]> = { [N in Ns[number]]?: ValueOf<N> | undefined };

/**
 * What settings say of each other, declared once; every reader holds a form to them
 * (settings/values.ts): the job commands, job files, resumed records, scan and check.
 * - `order`: the first may not be above the second (`said`: how "above" reads for the kind; `why`: what it would mean);
 * - `needs`: the first is taken only with the second;
 * - `apart`: the first is not taken with any of the others.
 */
export type CrossCheck =
  | { order: readonly [SettingName, SettingName]; said: string; why: string }
  | { needs: SettingName; on: SettingName; why?: string }
  | { apart: SettingName; from: readonly SettingName[]; why: string };
export const CROSS_CHECKS: readonly CrossCheck[] = [
  { order: ['minSize', 'maxSize'], said: 'is larger than', why: 'no file would be left' },
  { order: ['minAge', 'maxAge'], said: 'is longer than', why: 'no file would be left' },
  { apart: 'filterFrom', from: ['include', 'exclude'], why: 'put those in the file as "+ PATTERN" and "- PATTERN" lines, in the order they should apply' },
  ...(['manifestEncoding', 'manifestSheet', 'manifestDelimiter', 'manifestPartial'] as const).map((n) => ({ needs: n, on: 'manifest' as const })),
  { needs: 'backupDir', on: 'overwriteChanged', why: 'without it no pulled file is replaced, so none is moved' },
];

type Names = readonly SettingName[];
const LEASE = ['waitLock', 'lockTtl', 'lock'] as const satisfies Names;
const WINDOW = ['maxDuration', 'maxTransfer', 'maxFiles', 'cutoffMode'] as const satisfies Names;
const PATTERNS = ['include', 'exclude', 'filterFrom'] as const satisfies Names;
const SIZE_AGE = ['minSize', 'maxSize', 'minAge', 'maxAge'] as const satisfies Names;
const ARCHIVE = ['archiveEncoding', 'maxEntries', 'stripComponents'] as const satisfies Names;
const MANIFEST = ['manifest', 'manifestDelimiter', 'manifestEncoding', 'manifestSheet'] as const satisfies Names;
const JOB_RUN = ['profile', 'metricsFile', 'pushgateway', 'notify'] as const satisfies Names;
const SHOWN = ['state', 'stats', 'json'] as const satisfies Names;

/** What a mirror and an upload both take: the files, where they go, how they are sent. */
const SENDING = ['source', 'project', 'to', ...PATTERNS, 'concurrency', 'bwlimit', 'rps', 'checksum', 'resync', 'followSymlinks', 'ocrEngine', 'ocrStrategy', 'coordinateExtractionStrategy', 'metadata', 'manifestPartial', ...ARCHIVE, ...MANIFEST, ...SIZE_AGE, ...LEASE, ...WINDOW, ...SHOWN] as const satisfies Names;

/** What a mirror and an upload both take, by name: MirrorOptions (jobs/mirror.ts) is derived from it. */
export const SENDING_SETTINGS = SENDING;

/**
 * Settings no job's options carry as they are: they make something together (the lease, the run's
 * window, the filters, the wait for processing) or belong to the run (its store, its output, its
 * profile and metrics), and jobs/definition.ts makes them into that.
 */
export const NOT_OPTIONS = ['include', 'exclude', 'filterFrom', 'waitLock', 'lockTtl', 'lock', 'maxDuration', 'maxTransfer', 'maxFiles', 'cutoffMode', 'wait', 'timeout', 'state', 'stats', 'json', 'dryRun', 'rps', 'profile', 'metricsFile', 'pushgateway', 'notify'] as const satisfies Names;
export type NotOption = (typeof NOT_OPTIONS)[number];
/** A job's options as its settings give them, by name (the made ones left out). */
export type OptionValues<Ns extends readonly SettingName[]> = Omit<Values<Ns>, NotOption>;

/**
 * The settings of each job kind, in the order its command's help lists them. The command takes
 * each as a flag (or an argument, `elsewhere`); its job file as a key.
 */
export const JOB_SETTINGS = {
  mirror: [...SENDING, 'dryRun', 'wait', 'timeout', ...JOB_RUN],
  upload: [...SENDING, 'playbook', 'name', 'noWait', 'timeout', 'retryFailed', 'ocrFallback', 'retryReasons', 'retryRounds', 'ack', ...JOB_RUN],
  pull: ['pullProject', 'dir', 'from', ...PATTERNS, 'concurrency', 'bwlimit', 'rps', ...SIZE_AGE, ...WINDOW, 'localNames', 'overwriteChanged', 'backupDir', 'ignoreChecksum', 'dryRun', 'manifestOut', ...SHOWN, ...JOB_RUN],
  'playbooks-backup': ['out', 'keep', 'keepDaily', 'keepWeekly', 'state', 'rps', ...LEASE, 'json', ...JOB_RUN],
  migrate: ['fromProfile', 'toProfile', 'projects', 'allProjects', 'playbooks', 'allPlaybooks', 'concurrency', 'bwlimit', 'shard', 'sameTenant', ...SHOWN, 'map', 'dryRun', 'intoExisting', 'verify', 'wait', 'timeout', ...LEASE, ...WINDOW, 'metricsFile', 'pushgateway', 'notify'],
} as const satisfies Record<string, Names>;
export type JobKind = keyof typeof JOB_SETTINGS;
export const JOB_KINDS = Object.keys(JOB_SETTINGS) as JobKind[];
/** The kinds `ferry jobs resume` takes up again from a run's record (the one list: its summary offers it only for these). */
export const RESUMABLE_JOBS: readonly JobKind[] = ['mirror', 'upload', 'migrate'];

/** Whether a resumed run of this kind keeps the setting: never for a kind that does not resume (a pull is run again). */
export function keptOnResume(kind: JobKind, s: Setting): boolean {
  return s.resume && RESUMABLE_JOBS.includes(kind);
}

/** The command each job kind runs as. */
export const JOB_COMMANDS: Record<JobKind, string> = { mirror: 'mirror', upload: 'upload', pull: 'pull', migrate: 'migrate', 'playbooks-backup': 'playbooks backup' };

/** The commands that take some of these settings without being a job kind. */
export const OTHER_SETTINGS = {
  scan: ['to', ...PATTERNS, ...ARCHIVE, ...MANIFEST, ...SIZE_AGE, 'rps', 'bwlimit'],
  check: ['project', 'to', ...PATTERNS, ...ARCHIVE, ...MANIFEST],
  run: ['dryRun', 'stats', 'json'],
} as const satisfies Record<string, Names>;
