// `ferry completion bash|zsh|fish`: a completion script for the shell, written from the commands'
// own definitions. Its definition; the action is in ../actions and loads when it runs.
import { Argument, type Command } from 'commander';
import { later } from '../later.js';

export function registerCompletion(program: Command): void {
  program
    .command('completion')
    .description('print a completion script for your shell: source <(ferry completion bash), or see docs/cli.md for zsh and fish')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .action(later(() => import('../actions/completion.js'), 'completionAction'));
}
