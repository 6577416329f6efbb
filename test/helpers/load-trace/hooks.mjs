// Module hooks that write every module Node resolves to the file named by FERRY_LOAD_TRACE, one
// URL per line (test/cli/startup.test.ts reads what `--help` loads).
import { appendFileSync } from 'node:fs';

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (process.env.FERRY_LOAD_TRACE) appendFileSync(process.env.FERRY_LOAD_TRACE, `${resolved.url}\n`);
  return resolved;
}
