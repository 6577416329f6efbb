// The house rules, checked on every `npm test` (test/architecture/dependencies.test.ts) and by
// `npx depcruise src jobs`. Data flows one way: cli -> jobs -> sync/backends/runner/store/api; the
// engine knows no backend; the emulator shares only the contract with the client.
/** The ground floor's files: they import nothing of ferry but each other. */
const GROUND = '^src/(marks|errors|ids|slots|log|hashed-keys|duration|nearest|scratch|processes|clock|libraries|shell-quote|text)\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'engine-knows-no-backend',
      comment: 'src/sync is the transfer engine alone: it reads a Source and writes a Destination, and imports no backend, no HTTP client, no file system.',
      severity: 'error',
      from: { path: '^src/sync/' },
      to: { path: '^(src/(backends|api|cli|emulator|tenants|playbooks|report|config)/|jobs/)' },
    },
    {
      name: 'engine-no-io',
      comment: 'No file system, network or database in the engine: those are the backends\' and the store\'s.',
      severity: 'error',
      from: { path: '^src/sync/' },
      to: { dependencyTypes: ['core', 'npm'], path: '^(node:)?(fs|fs/promises|http|https|net|tls|dgram|child_process)$|^(undici|better-sqlite3|fast-glob|unzipper|archiver)(/|$)' },
    },
    {
      name: 'emulator-shares-only-the-contract',
      comment: 'The emulator stands in for the service: of ferry it imports the contract types only.',
      severity: 'error',
      from: { path: '^src/emulator/' },
      to: { path: '^(src/|jobs/)', pathNot: '^src/(emulator|contract)/' },
    },
    {
      name: 'emulator-service-knows-no-http',
      comment: 'The simulated service (src/emulator/service) is the service\'s behaviour alone: requests, routes and the control API reach it, it reaches none of them.',
      severity: 'error',
      from: { path: '^src/emulator/service/' },
      to: { path: '^src/emulator/(http|routes|control)/|^(node_modules/)?(fastify|@fastify/)' },
    },
    {
      name: 'client-knows-no-emulator',
      comment: 'Nothing but the CLI actions that start it, and tests, reaches into the emulator; its modes\' choices (data alone) are the CLI flags\' too.',
      severity: 'error',
      from: { path: '^(src/|jobs/)', pathNot: '^src/(emulator/|cli/actions/(emulator|demo)\\.ts)' },
      to: { path: '^src/emulator/', pathNot: '^src/emulator/mode-choices\\.ts$' },
    },
    {
      name: 'one-way-to-the-cli',
      comment: 'Only the CLI imports the CLI.',
      severity: 'error',
      from: { path: '^(src/|jobs/)', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'one-way-to-the-jobs',
      comment: 'Jobs compose the rooms below them; nothing below imports a job.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^jobs/' },
    },
    {
      name: 'backends-apart',
      comment: 'A backend does not reach into another backend\'s room (shared rules live in src/backends/*.ts).',
      severity: 'error',
      from: { path: '^src/backends/([^/]+)/' },
      to: { path: '^src/backends/([^/]+)/', pathNot: '^src/backends/$1/' },
    },
    // The "may import" column of docs/architecture.md, floor by floor, held here so that it stays true.
    {
      name: 'ground-floor-imports-nothing-of-ferry',
      comment: 'The ground floor (docs/architecture.md) imports only the ground floor.',
      severity: 'error',
      from: { path: GROUND },
      to: { path: '^(src/|jobs/)', pathNot: GROUND },
    },
    {
      name: 'store-imports-the-ground-floor',
      comment: 'The checkpoint store imports only the ground floor.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^(src/|jobs/)', pathNot: `^src/store/|${GROUND}` },
    },
    {
      name: 'client-imports-the-contract',
      comment: 'The typed client imports only the contract and the ground floor.',
      severity: 'error',
      from: { path: '^src/api/' },
      to: { path: '^(src/|jobs/)', pathNot: `^src/(api|contract)/|${GROUND}` },
    },
    {
      name: 'testcontainers-module-imports-the-client',
      comment: 'ferry/testcontainers hands a test the emulator image and clients of it: the client, nothing else of ferry.',
      severity: 'error',
      from: { path: '^src/testcontainers/' },
      to: { path: '^(src/|jobs/)', pathNot: `^src/(testcontainers|api|contract)/|${GROUND}` },
    },
    {
      name: 'runner-imports-store-and-client',
      comment: 'The life of a run imports the store, the client and the ground floor.',
      severity: 'error',
      from: { path: '^src/runner/' },
      to: { path: '^(src/|jobs/)', pathNot: `^src/(runner|store|api)/|${GROUND}` },
    },
    {
      name: 'engine-imports-runner-and-store',
      comment: 'The transfer engine imports the runner, the store and the ground floor (docs/architecture.md).',
      severity: 'error',
      from: { path: '^src/sync/' },
      to: { path: '^(src/|jobs/)', pathNot: `^src/(sync|runner|store)/|${GROUND}` },
    },
    {
      name: 'backends-import-below',
      comment: 'The backends import the engine (its contract), the client, the store, the runner and the ground floor.',
      severity: 'error',
      from: { path: '^src/backends/' },
      to: { path: '^(src/|jobs/)', pathNot: `^src/(backends|sync|api|store|runner|contract)/|${GROUND}` },
    },
    {
      name: 'mapping-imports-client-and-store',
      comment: 'The id map and organization metadata import the client, the store and the ground floor.',
      severity: 'error',
      from: { path: '^src/mapping/' },
      to: { path: '^(src/|jobs/)', pathNot: `^src/(mapping|api|store)/|${GROUND}` },
    },
    {
      name: 'playbooks-import-below',
      comment: 'Playbook archives and imports import mapping, the zip reader and its entry types, config (the --map schema), the client, the runner, the store and the ground floor.',
      severity: 'error',
      from: { path: '^src/playbooks/' },
      to: { path: '^(src/|jobs/)', pathNot: `^src/(playbooks|mapping|backends|sync|config|api|runner|store)/|${GROUND}` },
    },
    {
      name: 'tenants-import-below',
      comment: "A migration's parts import playbooks, mapping, backends, the engine, the client, the runner, the store and the ground floor.",
      severity: 'error',
      from: { path: '^src/tenants/' },
      to: { path: '^(src/|jobs/)', pathNot: `^src/(tenants|playbooks|mapping|backends|sync|api|runner|store)/|${GROUND}` },
    },
    {
      name: 'settings-imports-readers-and-constants',
      comment: 'The settings layer imports the rooms whose readers and defaults it declares (runner, backends, sync, config) and the ground floor.',
      severity: 'error',
      from: { path: '^src/settings/' },
      to: { path: '^(src/|jobs/)', pathNot: `^src/(settings|runner|backends|sync|config)/|${GROUND}` },
    },
    {
      name: 'settings-read-by-jobs-and-the-cli',
      comment: 'Only the jobs and the command read settings: the engine, the backends and the client are told values.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(settings|cli)/' },
      to: { path: '^src/settings/' },
    },
    {
      name: 'no-circular',
      comment: 'No module imports itself back, except among the CLI\'s commands.',
      severity: 'error',
      from: { pathNot: '^src/cli/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/|\\.d\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.json'], mainFields: ['module', 'main', 'types'] },
  },
};
