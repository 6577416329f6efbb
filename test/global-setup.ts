// The CLI tests run the compiled `ferry` command as a user would, so build it once first.
// Type errors do not stop the build here: `npm test` type-checks on its own before vitest runs.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));
  spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: root, stdio: 'ignore' });
}
