// `ferry config list|show`: read only; no request, no store. Names shown escaped; secrets never
// read beyond whether they are there.
import type { Command } from 'commander';
import { ConfigurationError } from '../../api/errors.js';
import { describeProfiles, ENV_VARS, profileNotFound, type ProfileView } from '../../config/profile.js';
import { safeText } from '../../text.js';
import { globalOptions } from '../context.js';
import { Reply } from '../reply.js';
import { EXIT } from '../exit-codes.js';

export async function configListAction(opts: { json?: boolean }, cmd: Command): Promise<void> {
  const { file, defaultProfile, profiles } = describeProfiles({ configFile: globalOptions(cmd).config });
  process.exitCode = EXIT.ok;
  Reply.to(opts).answer('succeeded', EXIT.ok, { file: file ?? null, defaultProfile: defaultProfile ?? null, profiles }, () => {
    if (!file) return 'no config file: connection settings come from FERRY_* variables (FERRY_CONFIG names a file)';
    const lines = [`${safeText(file)}: ${profiles.length} profile${profiles.length === 1 ? '' : 's'}`];
    for (const p of profiles) {
      lines.push(`${p.isDefault ? '*' : ' '} ${safeText(p.name)}  ${p.host ?? '(no address)'}  client ${safeText(p.clientId ?? '(none)')}  secret from ${safeText(p.secretFrom)}${p.problem ? `  [${safeText(p.problem)}]` : ''}`);
    }
    return lines.join('\n');
  });
}

export async function configShowAction(name: string | undefined, opts: { json?: boolean }, cmd: Command): Promise<void> {
  const g = globalOptions(cmd);
  const { file, defaultProfile, profiles } = describeProfiles({ configFile: g.config });
  const wanted = name ?? g.profile ?? process.env.FERRY_PROFILE ?? defaultProfile;
  if (!wanted) throw new ConfigurationError(file ? `no profile named and ${file} has no defaultProfile; its profiles: ${profiles.map((p) => p.name).join(', ') || 'none'}` : 'no config file, so no profile to show (FERRY_CONFIG names a file)');
  const p = profiles.find((x) => x.name === wanted);
  if (!p) throw profileNotFound(wanted, file, profiles.map((x) => x.name));
  // The FERRY_* connection variables set now: with -p they are refused where they disagree, otherwise they complete the profile.
  const overriding = Object.keys(ENV_VARS).filter((v) => process.env[v] !== undefined);
  process.exitCode = EXIT.ok;
  Reply.to(opts).answer('succeeded', EXIT.ok, { file, profile: p, environment: overriding }, () => show(p, file as string, overriding));
}

function show(p: ProfileView, file: string, overriding: string[]): string {
  const row = (k: string, v: string | number | undefined) => `  ${k.padEnd(18)} ${v === undefined ? '-' : safeText(String(v))}`;
  return [
    `profile ${safeText(p.name)}${p.isDefault ? ' (the default)' : ''} in ${safeText(file)}`,
    row('host', p.host),
    row('base URL', p.baseUrl),
    row('settings URL', p.settingsUrl),
    row('auth URL', p.authUrl),
    row('audience', p.audience),
    row('client id', p.clientId),
    row('secret from', p.secretFrom),
    row('requests/s cap', p.requestsPerSecond),
    row('log level', p.logLevel),
    ...(p.problem ? [row('problem', p.problem)] : []),
    ...(overriding.length ? [`  set in the environment: ${overriding.join(', ')} (with -p ${safeText(p.name)} a value that disagrees is refused; otherwise it completes the profile)`] : []),
  ].join('\n');
}
