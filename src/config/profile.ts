// Connection settings: a profile from a config file, completed by FERRY_* environment variables;
// a profile named on the command line is used alone (a disagreeing variable is refused). Secrets
// never live in a profile: they come from the environment or a secrets file.
import { accessSync, constants, readFileSync, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { z } from 'zod';
import { yaml, zod } from '../libraries.js';
import { ConfigurationError } from '../api/errors.js';
import { FORM_ORDERS, type ClientOptions, type FormOrder } from '../api/transport.js';
import { resolveAddress, shownUrl, type AddressInput, type ResolvedAddress } from '../api/addresses.js';
import { parseListingLag } from '../api/listing-lag.js';

/** The largest page size a profile may record (the largest the probe asks for). */
export const MAX_PAGE_SIZE = 1000;

/** The config file's schema, built at its first use (../libraries.ts). */
function buildSchemas() {
  const { z } = zod();
  const profile = z
    .object({
      tenant: z.string().min(1).optional(),
      region: z.string().min(1).optional(),
      domain: z.string().min(1).optional(),
      baseUrl: z.url().optional(),
      settingsUrl: z.url().optional(),
      authUrl: z.url().optional(),
      audience: z.string().min(1).optional(),
      clientId: z.string().min(1).optional(),
      /** Name of the environment variable holding the client secret. */
      clientSecretEnv: z.string().min(1).optional(),
      /** Path of a file whose first line is the client secret. */
      clientSecretFile: z.string().min(1).optional(),
      requestsPerSecond: z.number().positive().optional(),
      /** The longest the service takes to list a new item (a duration: `0`, `4s`); `ferry doctor --probe --write-profile` measures and records it. */
      listingLag: z.union([z.string().min(1), z.number().nonnegative()]).optional(),
      /** The most items a page of this service holds (`ferry doctor --probe --write-profile` measures it): no list asks for more. */
      pageSize: z.number().int().min(1).max(MAX_PAGE_SIZE).optional(),
      /** Whether the service reads an upload's form fields after its file (`any`) or only before it (`fields-first`, the default); `ferry doctor --probe --write-profile` finds and records it. */
      formOrder: z.enum(FORM_ORDERS).optional(),
      timeoutMs: z.number().int().positive().optional(),
      logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional(),
      /** Where every job of this profile pushes its metrics (as --pushgateway; docs/monitoring.md). */
      pushgateway: z.url({ protocol: /^https?$/ }).optional(),
      /** A ping URL every job of this profile reports its start and end to (as --notify; a secret: never shown). */
      notify: z.url({ protocol: /^https?$/ }).optional(),
    })
    .strict();

  const file = z
    .object({
      defaultProfile: z.string().optional(),
      profiles: z.record(z.string(), profile),
    })
    .strict();
  return { profile, file };
}

let schemas: ReturnType<typeof buildSchemas> | undefined;

export type Profile = z.infer<ReturnType<typeof buildSchemas>['profile']>;

/**
 * The FERRY_* variables and the profile field each one overrides. The one rule for every setting
 * with several sources: the command-line flag, then the environment, then the profile, then the
 * default (the profile below already holds the environment's values).
 */
export const ENV_VARS = {
  FERRY_BASE_URL: 'baseUrl',
  FERRY_SETTINGS_URL: 'settingsUrl',
  FERRY_AUTH_URL: 'authUrl',
  FERRY_TENANT: 'tenant',
  FERRY_REGION: 'region',
  FERRY_DOMAIN: 'domain',
  FERRY_AUDIENCE: 'audience',
  FERRY_CLIENT_ID: 'clientId',
  FERRY_LOG_LEVEL: 'logLevel',
  FERRY_LISTING_LAG: 'listingLag',
  FERRY_FORM_ORDER: 'formOrder',
} as const satisfies Record<string, keyof Profile>;

export interface ResolveOptions {
  /** Profile name (else FERRY_PROFILE, else the file's defaultProfile, else none). */
  profile?: string | undefined;
  /** Config file (else FERRY_CONFIG, else $XDG_CONFIG_HOME/ferry/config.yaml if it exists). */
  configFile?: string | undefined;
  env?: NodeJS.ProcessEnv;
}

export interface ResolvedSettings {
  profileName: string | undefined;
  profile: Profile;
  clientOptions: Omit<ClientOptions, 'logger'>;
}

/** The config file read: the one named (--config), else FERRY_CONFIG, else the default one if it exists. */
export function configFileInUse(named: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return named ?? env.FERRY_CONFIG ?? (existsSync(defaultConfigFile(env)) ? defaultConfigFile(env) : undefined);
}

/** A profile that is not there, said with the ones that are. */
export function profileNotFound(name: string, file: string | undefined, names: readonly string[], env: NodeJS.ProcessEnv = process.env): ConfigurationError {
  const there = names.length ? `; its profiles: ${names.join(', ')}` : '; it has no profiles';
  const where = file ? `in ${file}${there}` : `(no config file found; set FERRY_CONFIG or create ${defaultConfigFile(env)})`;
  return new ConfigurationError(`profile "${name}" not found ${where}`);
}

export function defaultConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'ferry', 'config.yaml');
}

export function loadConfigFile(path: string): z.infer<ReturnType<typeof buildSchemas>['file']> {
  let raw: unknown;
  try {
    raw = yaml().parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'EISDIR' ? 'it is a folder; give the path of a YAML file' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw new ConfigurationError(`cannot read config file ${path}: ${why} (--config FILE or FERRY_CONFIG)`);
  }
  if (raw && typeof raw === 'object') rejectSecrets(raw as Record<string, unknown>, path);
  schemas ??= buildSchemas();
  const parsed = schemas.file.safeParse(raw);
  if (!parsed.success) throw new ConfigurationError(`config file ${path}: ${formatIssues(parsed.error)}`);
  return parsed.data;
}

/** Profile + environment -> client options. Every missing piece is named in the error. */
export function resolveSettings(opts: ResolveOptions = {}): ResolvedSettings {
  const env = opts.env ?? process.env;
  const file = configFileInUse(opts.configFile, env);
  const config = file ? loadConfigFile(file) : undefined;
  const profileName = opts.profile ?? env.FERRY_PROFILE ?? config?.defaultProfile;
  let profile: Profile = {};
  if (profileName) {
    const found = config?.profiles[profileName];
    if (!found) {
      throw profileNotFound(profileName, file, Object.keys(config?.profiles ?? {}), env);
    }
    profile = { ...found };
  }
  // A profile named on the command line is used alone: a FERRY_* connection variable that says
  // otherwise (another client id, another host) is refused, never mixed in, so that a write goes
  // to the tenant the command names.
  const named = opts.profile !== undefined;
  for (const [name, field] of Object.entries(ENV_VARS)) {
    const value = env[name];
    if (!value) continue;
    const own = (profile as Record<string, unknown>)[field];
    if (named && !PER_RUN.has(field) && own !== value) {
      throw new ConfigurationError(
        `profile "${profileName}" is named, but ${name} is set to "${value}" and the profile ${own === undefined ? `sets no ${field}` : `says "${String(own)}"`}: a named profile is used alone; unset ${name} or name no profile`,
      );
    }
    (profile as Record<string, unknown>)[field] = value;
  }

  // With no profile at all, where one would come from is said too: the settings may simply be in a file not found.
  const noProfile = profileName
    ? ''
    : `; or use a profile: --config FILE or FERRY_CONFIG, and -p NAME (${file ? `${file} names no default profile` : `no config file at ${defaultConfigFile(env)}`})`;
  let address: AddressInput;
  try {
    address = toAddress(profile);
  } catch (err) {
    if (err instanceof ConfigurationError && noProfile) throw new ConfigurationError(`${err.message}${noProfile}`);
    throw err;
  }
  const missing: string[] = [];
  if (!profile.clientId) missing.push('client id (FERRY_CLIENT_ID or clientId)');
  if (!profile.audience) missing.push('audience (FERRY_AUDIENCE or audience)');
  const clientSecret = readSecret(profile, env, named);
  if (!clientSecret) missing.push('client secret (FERRY_CLIENT_SECRET, or clientSecretEnv / clientSecretFile in the profile)');
  if (missing.length) throw new ConfigurationError(`missing ${missing.join('; ')}${noProfile}`);

  return {
    profileName,
    profile,
    clientOptions: {
      address,
      credentials: { clientId: profile.clientId as string, clientSecret: clientSecret as string, audience: profile.audience as string },
      ...(profile.requestsPerSecond !== undefined ? { requestsPerSecond: profile.requestsPerSecond } : {}),
      ...(profile.timeoutMs !== undefined ? { timeoutMs: profile.timeoutMs } : {}),
      ...(profile.pageSize !== undefined ? { pageSize: profile.pageSize } : {}),
      ...(profile.formOrder !== undefined ? { formOrder: formOrderOf(profile.formOrder, env.FERRY_FORM_ORDER ? 'FERRY_FORM_ORDER' : 'formOrder') } : {}),
      ...(profile.listingLag !== undefined ? { listingLagMs: listingLagOf(profile, env.FERRY_LISTING_LAG ? 'FERRY_LISTING_LAG' : `${profileName ? `profile "${profileName}"` : 'the profile'}: listingLag`) } : {}),
    },
  };
}

/** Variables that tune a run rather than name the tenant: they apply to a named profile too. */
const PER_RUN = new Set<string>(['logLevel', 'listingLag']);

/** The form order a profile or FERRY_FORM_ORDER names (the file's is checked by its schema, the variable's here). */
function formOrderOf(value: string, where: string): FormOrder {
  if (!(FORM_ORDERS as readonly string[]).includes(value)) throw new ConfigurationError(`${where}: "${value}" is not a form order (${FORM_ORDERS.join(' or ')})`);
  return value as FormOrder;
}

/** The profile's listing lag in ms (a number is seconds, as a bare number is on the command line). */
function listingLagOf(p: Profile, where: string): number | undefined {
  if (p.listingLag === undefined) return undefined;
  return parseListingLag(String(p.listingLag), where);
}

function toAddress(p: Profile): AddressInput {
  if (p.baseUrl || p.settingsUrl) {
    const missing = (['baseUrl', 'settingsUrl', 'authUrl'] as const).filter((k) => !p[k]);
    if (missing.length) {
      throw new ConfigurationError(`explicit URLs need all three of baseUrl, settingsUrl and authUrl; missing ${missing.join(', ')}`);
    }
    return { baseUrl: p.baseUrl as string, settingsUrl: p.settingsUrl as string, authUrl: p.authUrl as string };
  }
  const missing = (['tenant', 'region', 'domain'] as const).filter((k) => !p[k]);
  if (missing.length) {
    throw new ConfigurationError(
      `no service address: set ${missing.map((k) => `FERRY_${k.toUpperCase()}`).join(', ')} (or explicit FERRY_BASE_URL, FERRY_SETTINGS_URL, FERRY_AUTH_URL)`,
    );
  }
  return { tenant: p.tenant as string, region: p.region as string, domain: p.domain as string, authUrl: p.authUrl };
}

function readSecret(p: Profile, env: NodeJS.ProcessEnv, named: boolean): string | undefined {
  // A named profile with its own secret source uses it: FERRY_CLIENT_SECRET may be another client's.
  const own = named && (p.clientSecretEnv !== undefined || p.clientSecretFile !== undefined);
  if (env.FERRY_CLIENT_SECRET && !own) return env.FERRY_CLIENT_SECRET;
  if (p.clientSecretEnv) {
    const value = env[p.clientSecretEnv];
    if (!value) throw new ConfigurationError(`clientSecretEnv names ${p.clientSecretEnv}, but that variable is not set`);
    return value;
  }
  if (p.clientSecretFile) {
    try {
      const first = readFileSync(p.clientSecretFile, 'utf8').split(/\r?\n/)[0]?.trim();
      if (!first) throw new ConfigurationError(`clientSecretFile ${p.clientSecretFile} is empty`);
      return first;
    } catch (err) {
      if (err instanceof ConfigurationError) throw err;
      throw new ConfigurationError(`cannot read clientSecretFile ${p.clientSecretFile}: ${(err as Error).message}`);
    }
  }
  return undefined;
}

const SECRET_KEYS = new Set(['clientSecret', 'client_secret', 'secret', 'accessToken', 'token']);

/** A secret written into a config file is refused, naming where, without echoing it. */
function rejectSecrets(raw: Record<string, unknown>, path: string): void {
  const profiles = raw.profiles;
  if (!profiles || typeof profiles !== 'object') return;
  for (const [name, profile] of Object.entries(profiles as Record<string, unknown>)) {
    if (!profile || typeof profile !== 'object') continue;
    for (const key of Object.keys(profile)) {
      if (SECRET_KEYS.has(key)) {
        throw new ConfigurationError(
          `config file ${path}: profiles.${name}.${key}: secrets are not accepted in a profile; use FERRY_CLIENT_SECRET, clientSecretEnv or clientSecretFile`,
        );
      }
    }
  }
}

export function formatIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
}

/** One profile as `ferry config` shows it: where it points and where its secret comes from, never the secret. */
export interface ProfileView {
  name: string;
  isDefault: boolean;
  /** The service host, or undefined when the profile gives no complete address (see `problem`). */
  host: string | undefined;
  baseUrl: string | undefined;
  settingsUrl: string | undefined;
  authUrl: string | undefined;
  audience: string | undefined;
  clientId: string | undefined;
  /** e.g. `environment variable CONTOSO_SECRET (set)`, `file /run/secrets/x (readable)`. */
  secretFrom: string;
  /** What keeps the profile from working as written, if anything (FERRY_* variables may complete it). */
  problem: string | undefined;
  requestsPerSecond: number | undefined;
  logLevel: string | undefined;
}

/** The profiles of the config file in use (the same file resolveSettings reads), as shown to people. */
export function describeProfiles(opts: { configFile?: string | undefined; env?: NodeJS.ProcessEnv } = {}): { file: string | undefined; defaultProfile: string | undefined; profiles: ProfileView[] } {
  const env = opts.env ?? process.env;
  const file = configFileInUse(opts.configFile, env);
  if (!file) return { file: undefined, defaultProfile: undefined, profiles: [] };
  const config = loadConfigFile(file);
  const profiles = Object.entries(config.profiles).map(([name, p]): ProfileView => {
    let address: ResolvedAddress | undefined;
    const problems: string[] = [];
    try {
      address = resolveAddress(toAddress(p));
    } catch (err) {
      problems.push((err as Error).message);
    }
    if (!p.clientId) problems.push('no clientId');
    if (!p.audience) problems.push('no audience');
    return {
      name,
      isDefault: config.defaultProfile === name,
      host: address ? new URL(address.baseUrl).host : undefined,
      baseUrl: address && shownUrl(address.baseUrl),
      settingsUrl: address && shownUrl(address.settingsUrl),
      authUrl: address && shownUrl(address.authUrl),
      audience: p.audience,
      clientId: p.clientId,
      secretFrom: secretSource(p, env),
      problem: problems.length ? problems.join('; ') : undefined,
      requestsPerSecond: p.requestsPerSecond,
      logLevel: p.logLevel,
    };
  });
  return { file, defaultProfile: config.defaultProfile, profiles };
}

function secretSource(p: Profile, env: NodeJS.ProcessEnv): string {
  if (p.clientSecretEnv) return `environment variable ${p.clientSecretEnv} (${env[p.clientSecretEnv] ? 'set' : 'not set'})`;
  if (p.clientSecretFile) {
    try {
      accessSync(p.clientSecretFile, constants.R_OK);
      return `file ${p.clientSecretFile} (readable)`;
    } catch (err) {
      return `file ${p.clientSecretFile} (not readable: ${(err as NodeJS.ErrnoException).code ?? 'error'})`;
    }
  }
  return `FERRY_CLIENT_SECRET (${env.FERRY_CLIENT_SECRET ? 'set' : 'not set'})`;
}
