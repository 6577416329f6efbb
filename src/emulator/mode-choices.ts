// The choices of each emulator mode that can change while it runs: what `ferry emulator` takes as
// flags and what the control API takes (/_emulator/modes), one list for both. Data alone, so that
// the CLI's command table can name the choices without loading the emulator.
export const MODE_CHOICES = {
  dateCompleted: ['when-processed', 'at-patch'],
  streamFormat: ['events', 'json', 'no-final'],
  search: ['substring', 'prefix', 'word'],
  searchCase: ['insensitive', 'sensitive'],
  folderCase: ['insensitive', 'sensitive'],
  linkTtlSeconds: 'seconds',
  linkAuth: ['none', 'token'],
  metadata: ['kept', 'dropped'],
  range: ['honoured', 'ignored'],
  formOrder: ['any', 'fields-first'],
} as const;
