// `ferry demo` (`npm run demo`): the main job end to end on the embedded emulator.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('mirror a sample tree into the embedded emulator and explain the outcome (nothing leaves this machine)')
    .action(later(() => import('../actions/demo.js'), 'demoAction'));
}
