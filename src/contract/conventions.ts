// What ferry and its emulator both know beyond the service's interface: ferry's own conventions
// on top of it. The emulator knows them only to keep a promise of its control API (a restore ends
// every lease, docs/emulator.md); the service itself knows nothing of them.

/**
 * Projects named so are ferry's lease records (src/backends/project/lease-board.ts), never the
 * user's: a listing leaves them out unless asked for them.
 */
export const LEASE_RECORD_PREFIX = '.ferry-lease ';
