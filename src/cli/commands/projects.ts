// `ferry projects create NAME`: a project to mirror into, made without a token fetched by hand.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';

export function registerProjects(program: Command): void {
  const projects = program.command('projects').description('projects of the tenant: make one (`ferry ls` lists them)');
  projects
    .command('create')
    .description('create a project; a name another project has already is refused (exit 2), so that --project NAME keeps finding one')
    .argument('<name>', "the project's name")
    .option('--description <text>', "the project's description (default: none)")
    .option('--json', 'print one JSON object')
    .action(later(() => import('../actions/projects.js'), 'projectsCreateAction'));
}
