// The commander options of the declared settings (src/settings/declared.ts): each flag's help says
// its default and range from the declaration, so that `--help`, docs/cli.md and a job file agree.
import { Option, type Command } from 'commander';
import { SETTINGS, type Setting, type SettingName } from '../settings/declared.js';
import { onOff } from '../settings/kinds.js';

/** A setting's help, with its default and range as the declaration gives them. */
export function settingHelp(s: Setting): string {
  const shown = s.default ?? s.unset;
  const said = [shown !== undefined ? `default ${shown}` : undefined, s.range ? s.range.words : undefined].filter(Boolean);
  return said.length ? `${s.help} (${said.join('; ')})` : s.help;
}

/** The flag as commander reads it: `-n, --dry-run`, `--max-duration <duration>`. */
export function flagSpec(s: Setting): string {
  const long = s.kind.arg !== undefined && !isSwitch(s) ? `${s.flag} ${s.kind.arg}` : s.flag!;
  return s.short ? `${s.short}, ${long}` : long;
}

function isSwitch(s: Setting): boolean {
  return s.kind === onOff;
}

/** The declared setting behind a commander option, for the docs' tables. */
const declared = new WeakMap<Option, Setting>();
export const settingOf = (option: Option): Setting | undefined => declared.get(option);

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/**
 * Adds the named settings' flags to a command, in the order given (those with no flag are arguments
 * or global flags); `optional`: required settings this command can take from elsewhere (a job file).
 */
export function addSettings(cmd: Command, names: readonly SettingName[], optional: readonly SettingName[] = []): Command {
  for (const name of names) {
    const s: Setting = SETTINGS[name];
    if (!s.flag) continue;
    const option = new Option(flagSpec(s), settingHelp(s));
    if ('values' in s.kind) option.choices(s.kind.values as string[]);
    if (s.kind.arg === '<glob>' || s.kind.arg === '<key=value>') option.argParser(collect);
    if (s.required && !optional.includes(name)) option.makeOptionMandatory();
    if (s.hidden) option.hideHelp();
    declared.set(option, s);
    cmd.addOption(option);
  }
  return cmd;
}
