// Completion scripts written from the program itself, so they name every command, subcommand and
// flag there is (test/cli/completion.test.ts drives the bash one in bash). Hand-written: commander
// has no completion, and the completion packages on npm (omelette, tabtab) install into the
// user's shell files, which a CLI should not do on its own.
import type { Command } from 'commander';
import { buildProgram } from '../main.js';

interface Node {
  path: string[];
  flags: string[];
  subcommands: string[];
  description: string;
}

export async function completionAction(shell: 'bash' | 'zsh' | 'fish'): Promise<void> {
  const program = await buildProgram();
  const nodes: Node[] = [];
  const walk = (cmd: Command, path: string[]) => {
    const subs = cmd.commands.filter((c) => c.name() !== 'help');
    nodes.push({ path, flags: [...cmd.options.map((o) => o.long ?? o.short ?? ''), '--help'].filter(Boolean), subcommands: subs.map((c) => c.name()), description: cmd.description() });
    for (const sub of subs) walk(sub, [...path, sub.name()]);
  };
  walk(program, []);
  process.stdout.write(shell === 'fish' ? fish(nodes) : bash(nodes, shell === 'zsh'));
}

/** The global flags that take a value: the word after them is not a command. */
const WITH_VALUE = ['-p', '--profile', '--config', '--log-level'];

function bash(nodes: Node[], zsh: boolean): string {
  const cases = nodes
    .map((n) => `    "${n.path.join(' ')}") words="${[...n.subcommands, ...n.flags].join(' ')}" ;;`)
    .join('\n');
  return `${zsh ? '#compdef ferry\n# ferry completion for zsh: ferry completion zsh > "${fpath[1]}/_ferry", or source <(ferry completion zsh)\nautoload -U +X bashcompinit && bashcompinit\n' : '# ferry completion for bash: source <(ferry completion bash), or save it under /etc/bash_completion.d\n'}_ferry() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" i w skip=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    if [[ -n $skip ]]; then skip=""; continue; fi
    case "$w" in
      ${WITH_VALUE.join('|')}) skip=1 ;;
      -*) ;;
      *) path="\${path:+$path }$w" ;;
    esac
  done
  local words=""
  # The deepest command named so far: its subcommands and flags.
  while :; do
    case "$path" in
${cases}
      *) if [[ $path == *" "* ]]; then path="\${path% *}"; continue; fi; words="" ;;
    esac
    break
  done
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _ferry ferry
`;
}

function fish(nodes: Node[]): string {
  const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const lines = ['# ferry completion for fish: ferry completion fish > ~/.config/fish/completions/ferry.fish', 'complete -c ferry -f'];
  for (const n of nodes) {
    const here = n.path.length === 0 ? '__fish_use_subcommand' : `__fish_seen_subcommand_from ${n.path[n.path.length - 1]}`;
    for (const sub of n.subcommands) {
      const d = nodes.find((x) => x.path.join(' ') === [...n.path, sub].join(' '))?.description ?? '';
      lines.push(`complete -c ferry -n ${quote(here)} -a ${sub} -d ${quote(d.slice(0, 80))}`);
    }
    for (const flag of n.flags) {
      if (flag.startsWith('--')) lines.push(`complete -c ferry -n ${quote(here)} -l ${flag.slice(2)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
