// The project's own TypeScript, read as text by the architecture tests (the glossary, the flags).
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../..', import.meta.url));

/** Every .ts file under `dir` (declarations left out), its path from the project root. */
export async function sources(dir: string): Promise<{ path: string; text: string }[]> {
  const out: { path: string; text: string }[] = [];
  for (const e of await readdir(join(root, dir), { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || !e.name.endsWith('.ts') || e.name.endsWith('.d.ts')) continue;
    const path = join(e.parentPath, e.name);
    out.push({ path: path.slice(root.length), text: await readFile(path, 'utf8') });
  }
  return out;
}

/** The code of a file without its comments (line comments and blocks), so that prose may use a word freely. */
export const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
