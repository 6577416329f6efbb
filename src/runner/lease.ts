// The lease: one writer at a time per destination, held on the service itself, so that runs with
// different checkpoint stores (two machines, a fresh container, a laptop beside the cron job)
// exclude each other. The service has no conditional create, so the decision is the one of
// ZooKeeper's lock recipe, made with the order the service gives: every contender creates a claim,
// lists the claims, and holds the lease when no earlier live claim conflicts with its own. Time
// is the service's too: a record's age is measured against the service-assigned time of the
// contender's own claim, never against a machine's clock. The protocol and its assumptions are in
// docs/scale-out.md; test/runner/lease-interleavings.test.ts explores its schedules.
//
// This file knows no HTTP: the records live on a LeaseBoard (src/backends/project/lease-board.ts
// keeps them as projects of the service; the tests keep them in a model of it).
// The lease lives in rooms of its own (src/runner/lease/): the records and their words
// (protocol.ts), the pure decision (judge.ts), a lease held (held.ts), taking one (acquire.ts) and
// the operator's view (operator.ts), how a lease fails (errors.ts) and its TTL under a listing
// lag (ttl.ts). This module is their one entrance.
export * from './lease/protocol.js';
export { judge, pathsConflict, type Verdict } from './lease/judge.js';
export { HeldLease, type LeaseReport } from './lease/held.js';
export { acquireLease } from './lease/acquire.js';
export { leaseEntries, type LeaseEntry } from './lease/operator.js';
export { leaseTtlFor, LeaseTtlError, LAG_TTL_FACTOR } from './lease/ttl.js';
