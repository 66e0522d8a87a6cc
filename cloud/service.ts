import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createEdgeServer, type ServerLimits } from '../main/lib/http/server.ts';
import { createCloudHandler, type RateLimits } from './http/handler.ts';
import { addGaugeSource, type PoolUse } from './metrics.ts';
import { openLedger, type LedgerOptions } from './ledger.ts';
import { listenOperatorSocket } from './operator-rpc.ts';
import { pruneIdempotencyKeys } from './repo/events-repo.ts';
import { pruneNonces } from './repo/nonces-repo.ts';
import { lockDataDir, removeRuntime, writeRuntime } from './runtime.ts';
import type { Ctx } from './services/context.ts';
import type { Logger } from '../main/lib/logger.ts';
import { flushSettles, sweepReservations } from './services/reservations-service.ts';

export interface CloudServiceOptions {
  dataDir: string;
  databaseUrl?: string;
  /** the embedded database in memory instead of the data dir (tests, benchmarks) */
  memory?: boolean;
  database?: LedgerOptions['database'];
  host?: string;
  port?: number;
  log: Logger;
  env?: NodeJS.ProcessEnv;
  now?: () => Date;
  rateLimits?: Partial<RateLimits>;
  trustProxy?: boolean;
  /** write runtime.json and listen for operator commands (the CLI's serve); tests may run several instances without */
  runtimeFile?: boolean;
  releasesDir?: string;
  ai?: LedgerOptions['ai'];
  requestLog?: LedgerOptions['requestLog'];
  /** the gateway's public base URL for the URLs it hands out (download links); default: from each request's Host */
  publicUrl?: string;
  /** a Bearer token that reads /metrics; without one, only requests made on this host do */
  metricsToken?: string;
  /** on stop, how long requests in flight may take to finish before they are cut (default 10 s) */
  drainMs?: number;
  /** per-address connection cap and the other server limits (main/lib/http/server.ts) */
  serverLimits?: ServerLimits;
}

export interface CloudService {
  baseUrl: string;
  ctx: Ctx;
  stop(): Promise<void>;
}

const HOUSEKEEPING_MS = 60_000;
export const DEFAULT_DRAIN_MS = 10_000;
/** after the drain, how long cut requests get to release what they hold (an AI generation's hold) */
const RELEASE_MS = 3_000;
/** unix socket paths are limited to about 107 bytes */
const MAX_SOCKET_PATH = 100;

/** The composition root: ledger, HTTP server, housekeeping, runtime.json. */
export async function startCloudService(o: CloudServiceOptions): Promise<CloudService> {
  const embedded = !o.databaseUrl && !o.memory && !o.database;
  const unlock = embedded ? await lockDataDir(o.dataDir) : async () => {};
  let ctx: Ctx;
  try {
    ctx = await openLedger({
      dataDir: o.dataDir,
      databaseUrl: o.databaseUrl,
      memory: o.memory,
      database: o.database,
      env: o.env,
      log: o.log,
      now: o.now,
      releasesDir: o.releasesDir,
      ai: o.ai,
      requestLog: o.requestLog,
    });
  } catch (e) {
    await unlock();
    throw e;
  }
  let stopping = false;
  const halt = new AbortController();
  ctx.ai.halt = halt.signal;
  const handler = createCloudHandler(ctx, {
    rateLimits: o.rateLimits,
    trustProxy: o.trustProxy,
    publicUrl: o.publicUrl,
    metricsToken: o.metricsToken,
    stopping: () => stopping,
  });
  const inflight = new Set<Promise<void>>();
  const server = createEdgeServer((req, res) => {
    const p = handler(req, res).finally(() => inflight.delete(p));
    inflight.add(p);
  }, o.serverLimits);
  const dropGauges = addGaugeSource({
    pool: () => ('poolStats' in ctx.db ? (ctx.db as { poolStats(): PoolUse }).poolStats() : null),
    openHolds: async () =>
      Number(
        (await ctx.db.query<{ n: number }>(`SELECT count(*) AS n FROM usage_reservations WHERE status = 'held'`))
          .rows[0]?.n ?? 0,
      ),
  });
  await new Promise<void>((resolve, reject) =>
    server.once('error', reject).listen(o.port ?? 0, o.host ?? '127.0.0.1', () => resolve()),
  );
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const baseUrl = `http://${host}:${addr.port}`;

  let operator: Server | null = null;
  let socketPath: string | null = null;
  const token = randomBytes(32).toString('base64url');
  if (o.runtimeFile !== false) {
    const candidate = join(o.dataDir, 'operator.sock');
    if (embedded && candidate.length <= MAX_SOCKET_PATH) {
      operator = await listenOperatorSocket(ctx, candidate, token);
      socketPath = candidate;
    }
    await writeRuntime(o.dataDir, {
      pid: process.pid,
      base_url: baseUrl,
      database: ctx.db.kind,
      started_at: ctx.now().toISOString(),
      operator_socket: socketPath,
      operator_token: socketPath ? token : null,
    });
  }

  const housekeeping = setInterval(() => {
    void (async () => {
      const now = ctx.now();
      await sweepReservations(ctx);
      await pruneNonces(ctx.db, now);
      await pruneIdempotencyKeys(ctx.db, new Date(now.getTime() - 7 * 86_400_000));
      await ctx.requestLog.prune(now);
      await ctx.tasks.housekeep();
    })().catch((e) => ctx.log.warn('housekeeping failed', { error: (e as Error).message }));
  }, HOUSEKEEPING_MS);
  housekeeping.unref();
  ctx.log.info('gatehouse-cloud listening', { base_url: baseUrl, database: ctx.db.kind });

  let stopped: Promise<void> | null = null;
  return {
    baseUrl,
    ctx,
    stop: () =>
      (stopped ??= (async () => {
        // Readiness goes 503 and no new connection is taken; requests in flight get the drain to finish, then
        // their connections are cut, which aborts a generation and releases its hold through the ledger.
        stopping = true;
        clearInterval(housekeeping);
        const drainMs = o.drainMs ?? DEFAULT_DRAIN_MS;
        const closed = Promise.all([closeServer(server, drainMs), operator ? closeServer(operator, 1000) : null]);
        // The site's connection going away does not cut a provider call (its answer is still recorded); the stop does.
        const cut = setTimeout(() => halt.abort(), drainMs);
        await settleWithin(inflight, drainMs + RELEASE_MS);
        clearTimeout(cut);
        halt.abort();
        await closed;
        dropGauges();
        await flushSettles(ctx);
        await ctx.tasks.idle();
        await ctx.requestLog.flush();
        await ctx.db.close();
        if (o.runtimeFile !== false) await removeRuntime(o.dataDir);
        await unlock();
      })()),
  };
}

/** Stops accepting; idle keep-alive connections close now, busy ones when their answer is sent or after `drainMs`. */
function closeServer(s: Server, drainMs: number): Promise<void> {
  return new Promise((resolve) => {
    s.close(() => resolve());
    s.closeIdleConnections();
    // A keep-alive connection that finishes its request after close() is ended by Node; this cuts what is still busy.
    setTimeout(() => s.closeAllConnections(), drainMs).unref();
  });
}

/** Waits for the requests in flight (those that start meanwhile too), at most `ms`. */
async function settleWithin(inflight: Set<Promise<void>>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (inflight.size && Date.now() < deadline) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...inflight]),
      new Promise((r) => (timer = setTimeout(r, deadline - Date.now()))),
    ]);
    clearTimeout(timer);
  }
}
