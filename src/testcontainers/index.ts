// `ferry/testcontainers`: the emulator image as a Testcontainers module, as
// `@testcontainers/localstack` is LocalStack's: start it from a test, get its URLs, its clients and
// its control API, stop it after. `testcontainers` is the caller's (an optional peer dependency);
// ferry's own suite starts it in test/deploy/image.test.ts. docs/emulator.md, *As a container*.
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { AbstractStartedContainer, GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { FerryClient, type ClientOptions } from '../api/index.js';

/** The port the image's emulator listens on (the Dockerfile's EXPOSE). */
export const EMULATOR_PORT = 4010;

/** What the emulator's ready line (`--ready-json`) gives, with URLs the test process can reach. */
export interface EmulatorReady {
  baseUrl: string;
  settingsUrl: string;
  authUrl: string;
  audience: string;
  adminToken: string;
  tenants: { name: string; clientId: string; clientSecret: string; readOnlyClientId: string; readOnlyClientSecret: string; assistants: { projectIdentifier: string }[] }[];
}

export class FerryEmulatorContainer extends GenericContainer {
  private hostNetwork = false;
  private emulatorArgs: string[] = [];

  /** `image`: a tag built from ferry's Dockerfile with `--target emulator`. */
  constructor(image = 'ferry-emulator:latest') {
    super(image);
    this.withWaitStrategy(Wait.forLogMessage(/"baseUrl":/)).withStartupTimeout(60_000);
  }

  /** More flags of `ferry emulator` (`--strict`, `--faults 503=0.1`, `--listing-lag 2s` …). */
  withEmulatorArgs(...args: string[]): this {
    this.emulatorArgs.push(...args);
    return this;
  }

  /** The token the control API wants (default: one the emulator makes up, in `ready.adminToken`). */
  withAdminToken(token: string): this {
    return this.withEnvironment({ FERRY_EMULATOR_ADMIN_TOKEN: token });
  }

  /**
   * On the host's network, listening on 127.0.0.1 at a port it picks, for a Docker engine without
   * a bridge (no port can be mapped there). Its health check is told that port.
   */
  withHostNetwork(): this {
    this.hostNetwork = true;
    return this.withNetworkMode('host');
  }

  override async start(): Promise<StartedFerryEmulatorContainer> {
    if (this.hostNetwork) {
      const port = await freeLoopbackPort();
      this.withEnvironment({ FERRY_EMULATOR_HEALTH_URL: `http://127.0.0.1:${port}/_emulator/health` }).withCommand(['emulator', '--host', '127.0.0.1', '--port', String(port), '--ready-json', ...this.emulatorArgs]);
    } else {
      this.withExposedPorts(EMULATOR_PORT).withCommand(['emulator', '--host', '0.0.0.0', '--port', String(EMULATOR_PORT), '--ready-json', ...this.emulatorArgs]);
    }
    const started = await super.start();
    const ready = await readyLine(started);
    // Behind a mapped port the ready line's own address is the container's: the test reaches the mapped one.
    const origin = this.hostNetwork ? undefined : `http://${started.getHost()}:${started.getMappedPort(EMULATOR_PORT)}`;
    const reach = (url: string) => (origin ? `${origin}${new URL(url).pathname.replace(/\/$/, '')}` : url);
    return new StartedFerryEmulatorContainer(started, { ...ready, baseUrl: reach(ready.baseUrl), settingsUrl: reach(ready.settingsUrl), authUrl: reach(ready.authUrl) });
  }
}

export class StartedFerryEmulatorContainer extends AbstractStartedContainer {
  private readonly clients: FerryClient[] = [];

  constructor(
    started: StartedTestContainer,
    readonly ready: EmulatorReady,
  ) {
    super(started);
  }

  /** A client of tenant `tenant` (0: the first of the ready line), closed when the container stops. */
  client(tenant = 0, options: Partial<Pick<ClientOptions, 'retry' | 'listingLagMs'>> = {}): FerryClient {
    const t = this.ready.tenants[tenant];
    if (!t) throw new RangeError(`the emulator has ${this.ready.tenants.length} tenants; there is no tenant ${tenant}`);
    const client = new FerryClient({ address: this.ready, credentials: { clientId: t.clientId, clientSecret: t.clientSecret, audience: this.ready.audience }, ...options });
    this.clients.push(client);
    return client;
  }

  /** The variables that point a `ferry` command at tenant `tenant`, as a profile would. */
  env(tenant = 0): Record<string, string> {
    const t = this.ready.tenants[tenant]!;
    return { FERRY_BASE_URL: this.ready.baseUrl, FERRY_SETTINGS_URL: this.ready.settingsUrl, FERRY_AUTH_URL: this.ready.authUrl, FERRY_AUDIENCE: this.ready.audience, FERRY_CLIENT_ID: t.clientId, FERRY_CLIENT_SECRET: t.clientSecret };
  }

  /** A request to the control API (docs/emulator.md): `control('POST', 'reset')`, `control('PUT', 'faults', { spec: '503=0.2' })`. */
  async control(method: string, path: string, body?: unknown): Promise<Response> {
    return controlRequest(this.ready, method, path, body);
  }

  protected override async containerStopping(): Promise<void> {
    await Promise.all(this.clients.splice(0).map((c) => c.close()));
  }
}

/** A request to the control API of the emulator a ready line describes, however it was started. */
export function controlRequest(ready: Pick<EmulatorReady, 'baseUrl' | 'adminToken'>, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${ready.baseUrl}/_emulator/${path}`, { method, headers: { authorization: `Bearer ${ready.adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

/** The ready line: the first line of the container's output that is a JSON object. */
async function readyLine(started: StartedTestContainer): Promise<EmulatorReady> {
  const stream = await started.logs();
  try {
    for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
      if (line.startsWith('{')) return JSON.parse(line) as EmulatorReady;
    }
  } finally {
    stream.destroy();
  }
  throw new Error(`the emulator container ${started.getId()} ended its output without a ready line`);
}

async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
