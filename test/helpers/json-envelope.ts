// The schema of every --json answer (docs/json-output.schema.json), compiled once: every test that
// reads a command's --json output through onlyJson holds it to the schema.
import { readFileSync } from 'node:fs';
import ajv2020Module from 'ajv/dist/2020.js';

const Ajv2020 = ajv2020Module.default;
const schema = JSON.parse(readFileSync(new URL('../../docs/json-output.schema.json', import.meta.url), 'utf8')) as object;
const validate = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictRequired: false }).compile(schema);

/** Throws, naming every way `value` breaks the schema. */
export function assertEnvelope(value: unknown): void {
  if (validate(value)) return;
  const why = (validate.errors ?? []).map((e) => `${e.instancePath || '(top)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`).join('; ');
  throw new Error(`--json answer breaks docs/json-output.schema.json: ${why}\n${JSON.stringify(value).slice(0, 800)}`);
}

export function envelopeErrors(value: unknown): string[] {
  validate(value);
  return (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`);
}
