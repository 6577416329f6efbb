// `ferry emulator --write-profiles FILE`: a ferry config file with one ready profile per client of
// the running emulator, so that `ferry -p contoso ls` works at once. Secrets stay out of the file,
// as the config loader insists: each is in a file of its own (mode 0600) the profile names.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { stringify } from 'yaml';

/** What the emulator prints when ready (its ready line), as far as profiles need it. */
export interface EmulatorClients {
  baseUrl: string;
  settingsUrl: string;
  authUrl: string;
  audience: string;
  tenants: { name: string; clientId: string; clientSecret: string; readOnlyClientId: string; readOnlyClientSecret: string }[];
}

/** The first line of a file this wrote: only such a file is ever replaced. */
export const PROFILES_MARK = '# Written by `ferry emulator --write-profiles`';

export class ProfilesFileError extends Error {}

/** Writes the file (and its secrets folder beside it); returns the profile names, the default first. */
export function writeProfilesFile(file: string, emu: EmulatorClients, formOrder: 'any' | 'fields-first' = 'any'): string[] {
  const path = resolve(file);
  if (existsSync(path) && !readFileSync(path, 'utf8').startsWith(PROFILES_MARK)) {
    throw new ProfilesFileError(`--write-profiles ${file}: the file exists and was not written by ferry emulator; give another path (it is never overwritten)`);
  }
  const secrets = `${path}.secrets`;
  mkdirSync(secrets, { recursive: true, mode: 0o700 });
  const profiles: Record<string, Record<string, string>> = {};
  // Where the emulator reads an upload's form fields, as `ferry doctor --probe` would find it.
  const connection = { baseUrl: emu.baseUrl, settingsUrl: emu.settingsUrl, authUrl: emu.authUrl, audience: emu.audience, formOrder };
  for (const t of emu.tenants) {
    for (const [name, clientId, secret] of [
      [t.name, t.clientId, t.clientSecret],
      [`${t.name}-reader`, t.readOnlyClientId, t.readOnlyClientSecret],
    ] as const) {
      const secretFile = join(secrets, `${clientId}.secret`);
      writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
      profiles[name] = { ...connection, clientId, clientSecretFile: secretFile };
    }
  }
  const names = Object.keys(profiles);
  const text = `${PROFILES_MARK} at ${emu.baseUrl}: one profile per client\n# (tenant name: full access; -reader: read-only). Secrets are in ${secrets}.\n${stringify({ defaultProfile: names[0], profiles })}`;
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, text, { mode: 0o600 });
  renameSync(temp, path);
  return names;
}
