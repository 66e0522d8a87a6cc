import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { CloudClient, type CloudClientOptions } from '../../../main/cloud-client/index.ts';
import type { Vault } from '../../../main/core/ports/ports.ts';
import type { Clock } from '../../../main/lib/clock.ts';
import { uuidv7 } from '../../../main/lib/ids.ts';
import { createLogger } from '../../../main/lib/logger.ts';
import { openVault, type VaultChoice } from '../../../main/store/vault.ts';
import { startHarness, type Harness } from '../../cloud/helpers/cloud-harness.ts';
import { startFaultProxy, type FaultProxy } from '../../fixtures/fault-proxy.ts';

/**
 * The pieces of a cloud-client test: the real reference gateway (PGlite in
 * memory, port 0) with a clock the test can move, and clients on their own
 * data dirs with a real vault (the Secret Service under dbus-run-session, the
 * file vault where a test asks) and a clock the test can move, logging into
 * a buffer the test can search for secrets.
 */
export class MovableClock implements Clock {
  skewMs = 0;
  now(): number {
    return Date.now() + this.skewMs;
  }
}

export const HOUR = 3600_000;
export const DAY = 24 * HOUR;

export interface Gateway {
  h: Harness;
  clock: MovableClock;
  url: string;
  op<T = unknown>(command: Parameters<Harness['op']>[0], args?: Record<string, unknown>): Promise<T>;
  license(
    plan?: string,
    extra?: Record<string, unknown>,
  ): Promise<{ id: string; license_key: string; account_id: string }>;
  /** the events the gateway stored for a site, counted in its database */
  storedEvents(siteId: string): Promise<number>;
  stop(): Promise<void>;
}

export async function startGateway(): Promise<Gateway> {
  const clock = new MovableClock();
  const h = await startHarness({ now: () => new Date(clock.now()) });
  return {
    h,
    clock,
    url: h.svc.baseUrl,
    op: (c, a) => h.op(c, a) as never,
    license: (plan = 'pro', extra = {}) => h.op('licenses.create', { plan, ...extra }) as never,
    storedEvents: async (siteId) =>
      Number(
        (await h.svc.ctx.db.query<{ n: string }>('SELECT count(*) AS n FROM usage_events WHERE site_id = $1', [siteId]))
          .rows[0]!.n,
      ),
    stop: () => h.stop(),
  };
}

export interface TestClient {
  client: CloudClient;
  dataDir: string;
  clock: MovableClock;
  vault: Vault;
  logs: () => string;
  reopen(extra?: Partial<CloudClientOptions>): Promise<CloudClient>;
  close(): Promise<void>;
}

export async function newClient(
  o: Partial<CloudClientOptions> & { vaultBackend?: VaultChoice; dataDir?: string; clock?: MovableClock } = {},
): Promise<TestClient> {
  const dataDir = o.dataDir ?? (await mkdtemp(join(tmpdir(), 'gh-cc-')));
  const clock = o.clock ?? new MovableClock();
  let text = '';
  const sink = new Writable({
    write(chunk, _enc, cb) {
      text += String(chunk);
      cb();
    },
  });
  const log = createLogger({ level: 'debug', stream: sink });
  const vault = await openVault({ dataDir, backend: o.vaultBackend ?? 'auto', log });
  const opts = (extra: Partial<CloudClientOptions> = {}): CloudClientOptions => ({
    dataDir,
    vault,
    clock,
    log,
    tickMs: 3_600_000,
    ...o,
    ...extra,
  });
  const t: TestClient = {
    client: await CloudClient.open(opts()),
    dataDir,
    clock,
    vault,
    logs: () => text,
    reopen: async (extra) => {
      await t.client.close();
      t.client = await CloudClient.open(opts(extra));
      return t.client;
    },
    close: async () => {
      await t.client.close();
      if (!o.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
  return t;
}

/** What a usage event from the MCP pipeline looks like (main/core/calls/usage.ts makes them: its id and time, at `clock`'s now). */
export const toolCall = (n = 1, clock: Clock = { now: () => Date.now() }) => {
  const now = clock.now();
  return {
    event_id: uuidv7(now),
    event: 'mcp.tool.called',
    product: 'mcp',
    feature: 'site.pages.read',
    model: '',
    units: n,
    tokens_input: 0,
    tokens_output: 0,
    timestamp: new Date(now).toISOString(),
  };
};

export interface Licensed {
  t: TestClient;
  c: CloudClient;
  siteId: string;
  license: { id: string; license_key: string };
}

/** The clients of one test file: each made on its own data dir and closed at the end. */
export class ClientPool {
  private readonly all: TestClient[] = [];

  async fresh(o: Parameters<typeof newClient>[0] = {}): Promise<TestClient> {
    const t = await newClient({ vaultBackend: 'file', ...o });
    this.all.push(t);
    return t;
  }

  /** A client connected to `url` with an active license from `makeLicense`. */
  async connected(
    url: string,
    makeLicense: () => Promise<{ id: string; license_key: string }>,
    o: Parameters<typeof newClient>[0] = {},
  ): Promise<Licensed> {
    const t = await this.fresh(o);
    const r = await t.client.connect({ url });
    const license = await makeLicense();
    await t.client.activate(license.license_key);
    return { t, c: t.client, siteId: r.site_id, license };
  }

  async closeAll(): Promise<void> {
    for (const t of this.all.splice(0)) await t.close();
  }
}

/** A test file's gateway and client pool: started before its tests, stopped after. */
/**
 * The real gateway for a test file, and its clients closed after it; with
 * `proxy`, a fault proxy in front of it too, reset after every test.
 */
export function gatewaySuite(opts: { proxy?: boolean } = {}): {
  readonly gw: Gateway;
  readonly proxy: FaultProxy;
  pool: ClientPool;
} {
  let gw: Gateway | undefined;
  let proxy: FaultProxy | undefined;
  const pool = new ClientPool();
  beforeAll(async () => {
    gw = await startGateway();
    if (opts.proxy) proxy = await startFaultProxy(gw.url);
  });
  if (opts.proxy) afterEach(() => proxy?.reset());
  afterAll(async () => {
    await pool.closeAll();
    await proxy?.close();
    await gw?.stop();
  });
  return {
    get gw() {
      return gw!;
    },
    get proxy() {
      if (!opts.proxy) throw new Error('gatewaySuite was not asked for a proxy');
      return proxy!;
    },
    pool,
  };
}
