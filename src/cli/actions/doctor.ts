// `ferry doctor`: checks a profile end to end and prints a verdict.
import { describeTarget } from '../../api/target.js';
import { shownUrl } from '../../api/addresses.js';
import { lookup } from 'node:dns/promises';
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { decodeJwtClaims } from '../../api/auth.js';
import { NotFoundError, PermissionDeniedError } from '../../api/errors.js';
import type { FerryClient } from '../../api/client.js';
import { createContext, globalOptions } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { Reply } from '../reply.js';
import { describeProbe, probeListingLag } from './probe-lag.js';
import { describeFindings, probeService, type ProbeOptions, type ProbeReport } from './probe.js';
import { profileWriteTarget, recordInProfile, type ProfileWriteTarget } from '../../config/profile-write.js';
import { ConfigurationError } from '../../errors.js';
import { uuidFlag } from '../shared.js';
import { safeText } from '../../text.js';
import { formatLag, parseListingLag } from '../../api/listing-lag.js';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** A problem worth knowing that does not fail the verdict. */
  warning?: boolean;
}

/** Clock differences beyond this make token renewal unreliable. */
const MAX_SKEW_MS = 60_000;

interface DoctorOptions {
  json?: boolean;
  probeLag?: boolean;
  probe?: boolean;
  probeLinkWait?: string;
  playbook?: string;
  assistant?: string;
  model?: string;
  writeProfile?: boolean;
  rps?: string;
}

export async function doctorAction(opts: DoctorOptions, cmd: Command): Promise<void> {
  const linkWaitMs = opts.probe ? parseListingLag(opts.probeLinkWait ?? '60s', '--probe-link-wait') : 0;
  const asks = probeTargets(opts);
  const { client, settings } = createContext(cmd, opts.rps);
  // Where the findings go is checked before anything is sent: a probe is not run for nothing.
  const record = opts.writeProfile ? profileWriteTarget(globalOptions(cmd).config, settings.profileName) : undefined;
  if (opts.probe) return probeAction(client, settings.profileName, Reply.to(opts), { linkWaitMs, ...asks }, record);
  if (opts.probeLag) return lagAction(client, settings.profileName, Reply.to(opts));
  let checks: Check[];
  try {
    checks = await runChecks(client);
  } finally {
    await client.close();
  }
  const ok = checks.every((c) => c.ok);
  Reply.to(opts).answer(ok ? 'succeeded' : 'failed', ok ? EXIT.ok : EXIT.failed, { ok, profile: settings.profileName ?? null, target: client.target, checks }, () =>
    [...checks.map((c) => `[${c.ok ? (c.warning ? 'WARN' : ' ok ') : 'FAIL'}] ${c.name}: ${c.detail}`), '', ok ? 'verdict: ready' : 'verdict: NOT ready (see FAIL lines)'].join('\n'),
  );
  process.exitCode = ok ? EXIT.ok : EXIT.failed;
}


/** --playbook, --assistant, --model: checked before anything is sent (exit 2 naming the flag). */
function probeTargets(opts: DoctorOptions): Pick<ProbeOptions, 'playbook' | 'assistant' | 'model'> {
  if (!opts.probe && (opts.playbook || opts.assistant || opts.model || opts.writeProfile)) throw new ConfigurationError('--playbook, --assistant, --model and --write-profile go with --probe');
  const playbook = opts.playbook === undefined ? undefined : uuidFlag('--playbook', opts.playbook);
  let assistant: ProbeOptions['assistant'];
  if (opts.assistant !== undefined) {
    const [p = '', a = ''] = opts.assistant.split('/');
    assistant = { projectIdentifier: uuidFlag('--assistant PROJECT', p), assistantIdentifier: uuidFlag('--assistant ASSISTANT', a) };
  }
  if ((assistant === undefined) !== (opts.model === undefined)) throw new ConfigurationError('--assistant PROJECT/ASSISTANT and --model ID go together: the stream is asked of that assistant with that model');
  return { playbook, assistant, model: opts.model };
}

/**
 * Runs a probe that SIGINT or SIGTERM stops (through its signal: it then cleans up what it made
 * and returns), and closes the client after it. A second signal exits at once, as a job's does:
 * what the probe made and had not removed yet is left, and the next probe from this host removes it.
 */
async function untilStopped<T>(client: FerryClient, probe: (signal: AbortSignal) => Promise<T>): Promise<{ result: T; stop: AbortController }> {
  const stop = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    if (!stop.signal.aborted) {
      process.stderr.write(`ferry: ${sig} received: the probe stops and removes what it made (${sig === 'SIGINT' ? 'Ctrl-C' : sig} again exits at once)\n`);
      stop.abort();
      return;
    }
    process.stderr.write(`ferry: ${sig} again: exiting now; what the probe made and had not removed yet is left, and the next probe from this host removes it\n`);
    process.exit(EXIT.aborted);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return { result: await probe(stop.signal), stop };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await client.close();
  }
}

/** `--probe`: every open question asked; Ctrl-C stops it with its scratch project removed (exit 3). */
async function probeAction(client: FerryClient, profile: string | undefined, reply: Reply, asks: Omit<ProbeOptions, 'signal' | 'say'>, record: ProfileWriteTarget | undefined): Promise<void> {
  const say = (line: string) => process.stderr.write(`ferry: ${line}\n`);
  const { result: report, stop } = await untilStopped(client, (signal) => probeService(client, { ...asks, signal, say }));
  const code = stop.signal.aborted ? EXIT.aborted : EXIT.ok;
  // A stopped probe records nothing: its findings are partial.
  const written = record && !stop.signal.aborted ? writeFindings(record, report, client.transport.pages.recordedCap) : undefined;
  if (written) say(written.said);
  const unknown = Object.entries(report.probe).filter(([, v]) => 'unknown' in v).map(([k]) => k);
  const check: Check = { name: 'probe', ok: !stop.signal.aborted, detail: `${Object.keys(report.probe).length - unknown.length} questions answered${unknown.length ? `, unknown: ${unknown.join(', ')}` : ''}`, ...(unknown.length ? { warning: true } : {}) };
  reply.answer(stop.signal.aborted ? 'interrupted' : 'succeeded', code, { ok: check.ok, profile: profile ?? null, target: client.target, checks: [check], ...report, ...(written ? { profileWritten: written.json } : {}) }, () => {
    const hint = !record && !stop.signal.aborted ? ['to record listingLag, pageSize and formOrder in the profile: add --write-profile'] : [];
    return `what ${describeTarget(client.target)} answers:\n${[...describeFindings(report), ...hint].map((l) => `  ${l}`).join('\n')}`;
  });
  process.exitCode = code;
}

/**
 * The findings a profile can hold, recorded: the suggested listingLag, and the page cap as
 * pageSize (no cap seen as far as a recorded one: it is removed; not checked that far: kept).
 */
function writeFindings(target: ProfileWriteTarget, report: ProbeReport, recordedCap: number | undefined): { said: string; json: Record<string, unknown> } {
  const f = report.probe;
  const lag = 'unknown' in f.listingLagMs ? undefined : f.listingLagMs;
  const cap = 'unknown' in f.pageCap ? undefined : f.pageCap;
  const pageSize = cap === undefined ? undefined : cap.cap !== null ? cap.cap : recordedCap !== undefined && recordedCap <= cap.checkedUpTo ? null : undefined;
  const measured = new Date().toISOString().replace(/:\d\d\.\d+Z$/, 'Z');
  const said = [lag ? `worst listing lag ${formatLag(lag.worstMs)}` : 'listing lag unknown', cap ? (cap.cap === null ? `no page cap up to ${cap.checkedUpTo}` : `pages capped at ${cap.cap}`) : 'page cap unknown'];
  const order = 'unknown' in f.formOrder ? undefined : f.formOrder.order;
  if (order) said.push(`form fields read ${order === 'any' ? 'after the file too' : 'before the file only'}`);
  const { set, removed } = recordInProfile(target, { listingLag: lag ? (lag.suggested === '0' ? 0 : lag.suggested) : undefined, pageSize, formOrder: order }, `on ${measured}: ${said.join(', ')}`);
  const what = [...Object.entries(set).map(([k, v]) => `${k} ${v}`), ...removed.map((k) => `${k} removed`)];
  return {
    said: `${what.length ? `recorded in profile "${safeText(target.profile)}" of ${safeText(target.file)}: ${what.join(', ')} (${said.join(', ')})` : `nothing recorded in profile "${safeText(target.profile)}": ${said.join(', ')}`}${
      'listingLag' in set && process.env.FERRY_LISTING_LAG ? `; FERRY_LISTING_LAG=${safeText(process.env.FERRY_LISTING_LAG)} is set and still comes before the profile's listingLag` : ''
    }`,
    json: { file: target.file, profile: target.profile, measured, set, removed },
  };
}

/** `--probe-lag`: the listing lag measured, the bound to set said; Ctrl-C stops it with its canary removed. */
async function lagAction(client: FerryClient, profile: string | undefined, reply: Reply): Promise<void> {
  const { result: probe, stop } = await untilStopped(client, (signal) => probeListingLag(client, signal));
  const ok = probe.worstMs !== null && !stop.signal.aborted;
  const code = stop.signal.aborted ? EXIT.aborted : ok ? EXIT.ok : EXIT.failed;
  const lines = describeProbe(probe);
  const check: Check = { name: 'listing lag', ok, detail: lines.slice(-2).join('; ') };
  reply.answer(stop.signal.aborted ? 'interrupted' : ok ? 'succeeded' : 'failed', code, { ok, profile: profile ?? null, target: client.target, checks: [check], lagProbe: probe }, () => `listing lag of ${describeTarget(client.target)}:\n${lines.map((l) => `  ${l}`).join('\n')}`);
  process.exitCode = code;
}

export async function runChecks(client: FerryClient): Promise<Check[]> {
  const checks: Check[] = [];
  const { baseUrl, settingsUrl, authUrl } = client.transport.address;
  checks.push({ name: 'target', ok: true, detail: describeTarget(client.target) });
  checks.push({ name: 'addresses', ok: true, detail: `base ${shownUrl(baseUrl)}, settings ${shownUrl(settingsUrl)}, auth ${shownUrl(authUrl)}` });

  for (const [name, url] of [['base host', baseUrl], ['settings host', settingsUrl], ['auth host', authUrl]] as const) {
    const host = new URL(url).hostname;
    try {
      const { address } = await lookup(host);
      checks.push({ name: `${name} resolves`, ok: true, detail: `${host} -> ${address}` });
    } catch (err) {
      checks.push({ name: `${name} resolves`, ok: false, detail: `${host}: ${(err as Error).message}` });
    }
  }

  let token;
  try {
    token = await client.transport.tokens.token();
  } catch (err) {
    checks.push({ name: 'token', ok: false, detail: (err as Error).message });
    return checks; // nothing else can work without a token
  }
  const now = Date.now();
  const minutes = Math.round((token.expiresAt - now) / 60_000);
  checks.push({ name: 'token', ok: true, detail: `obtained; expires ${new Date(token.expiresAt).toISOString()} (in ${minutes} min)` });
  checks.push(clockCheck(token.issuedAt, token.expiresAt, now));

  checks.push(await probe('read call on base host', async () => {
    const page = await client.projects.list().page(1, 1);
    return `GET /projects answered; ${page.totalCount ?? page.items.length} project(s) visible`;
  }));
  checks.push(await probe('read call on settings host', async () => {
    const models = await client.models.list().page(1);
    return `GET /models answered; ${models.items.length} model(s)`;
  }));
  checks.push(await writeProbe(client));

  const claims = decodeJwtClaims(token.value);
  const granted = claims?.permissions ?? claims?.scope ?? claims?.scp;
  if (granted !== undefined) {
    checks.push({ name: 'granted permissions', ok: true, detail: Array.isArray(granted) ? granted.join(', ') : String(granted) });
  }
  return checks;
}

export function clockCheck(issuedAt: number | undefined, expiresAt: number, now: number): Check {
  if (issuedAt === undefined) {
    return { name: 'clock', ok: true, warning: true, detail: 'the token carries no iat claim; clock skew cannot be measured' };
  }
  const skew = now - issuedAt;
  if (now >= expiresAt) {
    return { name: 'clock', ok: false, detail: `the token is already expired by this machine's clock: the clock is ahead by about ${Math.round(skew / 1000)} s` };
  }
  if (Math.abs(skew) > MAX_SKEW_MS) {
    return { name: 'clock', ok: false, detail: `this machine's clock differs from the auth server's by about ${Math.round(skew / 1000)} s; fix the time (NTP) so tokens renew on time` };
  }
  return { name: 'clock', ok: true, detail: `skew against the token's iat is ${Math.round(skew / 1000)} s` };
}

async function probe(name: string, fn: () => Promise<string>): Promise<Check> {
  try {
    return { name, ok: true, detail: await fn() };
  } catch (err) {
    return { name, ok: false, detail: (err as Error).message };
  }
}

/**
 * Write permission, tested without changing anything: marking a notification that cannot exist
 * passes the permission check and then answers 404, or answers 403 when writes are not allowed.
 */
async function writeProbe(client: FerryClient): Promise<Check> {
  const name = 'write permission';
  try {
    await client.notifications.markRead(randomUUID(), true, { idempotent: false });
    return { name, ok: true, detail: 'granted' };
  } catch (err) {
    if (err instanceof NotFoundError) return { name, ok: true, detail: 'granted (probed with a harmless call)' };
    if (err instanceof PermissionDeniedError) {
      return { name, ok: true, warning: true, detail: 'MISSING: this application can read but not write; mirror, upload and import jobs will fail' };
    }
    return { name, ok: false, detail: (err as Error).message };
  }
}
