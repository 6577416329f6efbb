// The rules of a --filter-from file (rclone's shape), parsed; matched by ./patterns.ts. Apart from
// the matcher so that the CLI's flag definitions load no glob library at start-up.
import { ConfigurationError } from '../errors.js';

export interface FilterRule {
  take: boolean;
  pattern: string;
}

export function parseFilterRules(text: string, where: string): FilterRule[] {
  const rules: FilterRule[] = [];
  for (const [i, raw] of text.replace(/^\ufeff/, '').split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const m = /^([+-])\s+(\S.*)$/.exec(line);
    if (!m) throw new ConfigurationError(`${where}, line ${i + 1}: "${line.slice(0, 60)}" is not a rule: expected "+ PATTERN" (take) or "- PATTERN" (leave out)`);
    rules.push({ take: m[1] === '+', pattern: m[2] as string });
  }
  if (rules.length === 0) throw new ConfigurationError(`${where} holds no rule ("+ PATTERN" or "- PATTERN")`);
  return rules;
}

