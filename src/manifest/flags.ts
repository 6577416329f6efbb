// The manifest's flags as the command line gives them, and its error: light, so that registering
// the commands that take --manifest loads no CSV parser.
import { ConfigurationError } from '../errors.js';
import { visible } from '../text.js';

/** A manifest that cannot be used: exit 2 before anything is sent. */
export class ManifestError extends ConfigurationError {}

/** `--manifest-delimiter` as typed: `,`, `;`, `|`, or `tab`. */
export function delimiterFlag(value: string): string {
  if (value === 'tab' || value === '\\t' || value === '\t') return '\t';
  if ([',', ';', '|'].includes(value)) return value;
  throw new ManifestError(`--manifest-delimiter "${visible(value)}" is not one ferry reads: give , or ; or | or tab`);
}
