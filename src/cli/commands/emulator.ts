// `ferry emulator`: the service itself, on this machine, for tests and offline scripts.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { Option, type Command } from 'commander';
import { MODE_CHOICES } from '../../emulator/mode-choices.js';
import { later } from '../later.js';

export function registerEmulator(program: Command): void {
  program
    .command('emulator')
    .description('run a local, stateful emulator of the whole service; prints one line when ready (its URL and tenants; --ready-json: its URLs and clients as JSON)')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <n>', 'port (0 takes any free port)', '4010')
    .option('--data <dir>', 'keep state and blobs in this folder across restarts (default: in memory)')
    .option('--seed <file>', 'JSON seed replacing the default tenants, clients, metadata and models')
    .option('--write-profiles <file>', 'when ready, write a ferry config file with a profile per client (use it with --config or FERRY_CONFIG)')
    .option('--ready-json', 'print the ready line as one JSON object with the URLs, tenants and every client with its secret (for scripts)')
    .option('--faults <spec>', 'inject faults, e.g. 429=0.05,503=0.05,reset=0.02,latency=20,seed=7; corrupt=0.1 flips a byte of some downloads')
    .addOption(new Option('--token-ttl <seconds>', 'lifetime of issued tokens').default('3600'))
    .option('--listing-lag <duration>', 'list and search each new item only up to this long after its create returned, and a removed one as long after (each item its own delay, out of order), as a service that lists from a search index')
    .option('--max-page-size <n>', 'answer every list with at most n items per page, silently, as services that cap page sizes do')
    .option('--strict', 'the interface exactly as the spec shows it: no folder creation, no document-content route (url is a signed link)')
    .addOption(new Option('--folders <mode>', 'folder creation: the extension, or none (404)').choices(['extension', 'none']))
    .addOption(new Option('--date-completed <when>', "when a document upload's dateCompleted is set").choices([...MODE_CHOICES.dateCompleted]))
    .addOption(new Option('--stream-format <format>', 'what stream: true answers: events, plain json, or events without the final message').choices([...MODE_CHOICES.streamFormat]))
    .addOption(new Option('--search <match>', 'how searchText matches a name: anywhere in it, at its start, or whole words').choices([...MODE_CHOICES.search]))
    .addOption(new Option('--search-case <case>', 'whether searchText tells upper from lower case').choices([...MODE_CHOICES.searchCase]))
    .addOption(new Option('--folder-case <case>', 'whether folder names that differ only by case are two folders (sensitive) or one, the second a 409 (insensitive, the default)').choices([...MODE_CHOICES.folderCase]))
    .option('--time-resolution <ms>', 'give times (dateAdded…) cut to this many milliseconds, as a service storing whole seconds would (1000)')
    .option('--link-ttl <seconds>', 'how long a signed document link works (with --strict; default 3600)')
    .addOption(new Option('--link-auth <auth>', 'whether a signed document link also wants the bearer token').choices([...MODE_CHOICES.linkAuth]))
    .addOption(new Option('--range <mode>', 'whether a content download answers a Range request with 206 and those bytes (honoured, the default) or with 200 and the whole body (ignored)').choices([...MODE_CHOICES.range]))
    .addOption(new Option('--form-order <order>', "whether an upload's form fields are read wherever they come (any, the default) or only before the file part (fields-first: those after it are ignored)").choices([...MODE_CHOICES.formOrder]))
    .addOption(new Option('--metadata <kept>', "whether an upload's metadataJson is kept as the document's metadata").choices([...MODE_CHOICES.metadata]))
    .addOption(new Option('--admin-token <token>', 'the token the control API under /_emulator/ wants (default: one made up at start, given as adminToken by --ready-json)').env('FERRY_EMULATOR_ADMIN_TOKEN'))
    .option('--no-control', 'serve no control API (/_emulator/: reset, snapshots, faults, lag, modes, processing, clock, credits, traffic)')
    .option('--tls-cert <file>', 'serve https with this certificate (PEM), as the real service does; with --tls-key. ferry trusts it through NODE_EXTRA_CA_CERTS')
    .option('--tls-key <file>', "the certificate's private key (PEM), with --tls-cert")
    .action(async (...args: unknown[]) => {
      // Said before the service's modules load and its state is built: a terminal that shows
      // nothing for seconds (longer on a first run or a slow disk) reads as a hang.
      const opts = args[0] as { readyJson?: boolean };
      if (process.stderr.isTTY && !opts.readyJson) process.stderr.write('ferry emulator: starting (loading the service and building its state in memory)…\n');
      await later(() => import('../actions/emulator.js'), 'emulatorAction')(...args);
    });
}
