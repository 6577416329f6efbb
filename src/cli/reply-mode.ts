// Text or JSON: decided once, from --json, for the paths that answer before commander has parsed
// the command line (the stall net, a second Ctrl-C, a usage error). An argument after `--` is an
// operand, never the flag (`ferry mirror -- --json` mirrors a folder named --json).
export function answersInJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}
