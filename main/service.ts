import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { MCP_PATH, CONSOLE_PATH, ADMIN_PREFIX, DEFAULT_PORT, type RuntimeInfo } from './contract/health.ts';
import type { TokenCreateInput } from './contract/tokens.ts';
import type { ApiEvent } from './contract/api.ts';
import { deskEvent } from './core/staging/staged-standing.ts';
import { RateLimiter } from './lib/rate-limiter.ts';
import { GatehouseError } from './core/errors.ts';
import { writeRuntime, removeRuntime } from './store/runtime-file.ts';
import type { EndpointDeps, createMcpEndpoint } from './mcp/endpoint.ts';
import { allowedHostnames } from './lib/http/host.ts';
import { BodyBudget } from './lib/http/body.ts';
import { createEdgeServer, type ServerLimits } from './lib/http/server.ts';
import { AdminAuth } from './rest/admin-auth.ts';
import { createAdminRoutes } from './rest/admin-routes.ts';
import { createRouter } from './rest/http-router.ts';
import { openLocalCore, type LocalCoreConfig } from './local-core.ts';
import { VERSION } from './version.ts';
import { PACKAGE_ROOT } from './package-root.ts';

export interface ServiceConfig extends Omit<LocalCoreConfig, 'owner'> {
  host?: string;
  /** 0 picks a free port */
  port?: number;
  /** switch the gateway on at start (`serve --enable`) */
  enable?: boolean;
  /** extra Host names to accept (e.g. a LAN name when bound to 0.0.0.0) */
  allowedHosts?: string[];
  /** the built console; default dist-renderer/ beside the package */
  consoleDir?: string;
  /** write runtime.json (default true) */
  writeRuntimeFile?: boolean;
  /** connection cap and timeouts (main/lib/http/server.ts defaults), plus the memory all bodies being read may hold */
  limits?: ServerLimits & { bodyBudgetBytes?: number };
}

export { DEFAULT_PORT };
const DEFAULT_CONSOLE_DIR = join(PACKAGE_ROOT, 'dist-renderer');

/** The headless service: the gateway plus its HTTP face, runtime.json and a clean stop. */
export async function startService(config: ServiceConfig) {
  const core = await openLocalCore({ ...config, owner: 'service' });
  const host = config.host ?? '127.0.0.1';
  let server: HttpServer | null = null;
  try {
    if (config.enable) await core.settings.update({ enabled: true });
    const auth = await AdminAuth.open(core.vault, core.tokens, core.sessions);
    core.approvalLinks.useKey(auth.approvalLinkKey());
    const allowedHosts = allowedHostnames(host, config.allowedHosts);
    const bodyBudget = new BodyBudget(config.limits?.bodyBudgetBytes);
    let origin = '';
    const mcp = lazyEndpoint({
      registry: core.registry,
      pipeline: core.pipeline,
      settings: () => core.settings.get(),
      instructions: (ctx) => core.builtin.instructions(ctx),
      // settings, a revoked token (its streams end now) and a changed role all change what a token may see
      watchSettings: (listener) => {
        const offs = [
          core.events.subscribe((e) => e.type === 'settings' && listener()),
          core.tokens.onRevoke(listener),
          core.users.onRoleChange(listener),
        ];
        return () => offs.forEach((off) => off());
      },
      tokens: core.tokens,
      limiter: new RateLimiter(),
      auditor: core.auditor,
      clock: core.clock,
      log: core.log,
      allowedHosts,
      bodyBudget,
      // gatehouse-bridge --remote URL finds the upstream configured for URL (main/mcp/upstream-lookup.ts)
      remotes: () => core.upstreams.list().flatMap((u) => (u.url ? [{ id: u.id, url: u.url }] : [])),
      profileOf: (name) => core.profiles.get(name),
      tasks: { staging: core.staging, approvalUrl: (id) => core.approvalLinks.urlFor(id) },
    });
    const actions = createAdminRoutes({
      invoke: core.invoke,
      auth,
      origin: () => origin,
      log: core.log,
      bodyBudget,
      failures: new RateLimiter(),
      now: () => core.clock.now(),
      trustProxy: () => core.settings.get().trust_proxy_headers,
    });
    const info = () => ({
      name: 'gatehouse',
      version: VERSION,
      base_url: origin,
      mcp_url: `${origin}${MCP_PATH}`,
      console_url: `${origin}${CONSOLE_PATH}`,
      admin_url: `${origin}${ADMIN_PREFIX}`,
      enabled: core.settings.get().enabled,
    });
    const route = createRouter({
      mcp: mcp.handle,
      admin: actions.admin,
      pro: actions.pro,
      auth,
      consoleDir: config.consoleDir ?? DEFAULT_CONSOLE_DIR,
      allowedHosts,
      info,
      log: core.log,
    });

    server = createEdgeServer((req, res) => void route(req, res), config.limits);
    const listening = server;
    await new Promise<void>((resolve, reject) => {
      listening.once('error', (e: NodeJS.ErrnoException) =>
        reject(
          e.code === 'EADDRINUSE'
            ? new GatehouseError(
                'conflict',
                `port ${config.port ?? DEFAULT_PORT} on ${host} is in use: pick another with --port (0 = any free port)`,
              )
            : e,
        ),
      );
      listening.listen(config.port ?? DEFAULT_PORT, host, () => resolve());
    });
    const { port } = listening.address() as AddressInfo;
    origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    core.setUrls(origin);

    const runtime: RuntimeInfo = {
      pid: process.pid,
      base_url: origin,
      mcp_url: `${origin}${MCP_PATH}`,
      console_url: `${origin}${CONSOLE_PATH}`,
      admin_url: `${origin}${ADMIN_PREFIX}`,
      version: VERSION,
      started: new Date(core.clock.now()).toISOString(),
    };
    if (config.writeRuntimeFile !== false) await writeRuntime(config.dataDir, runtime);
    // Ready: the endpoint's code (the MCP SDK) loads now, in the background, before a client is likely to ask.
    mcp.warm();

    let stopping: Promise<void> | null = null;
    return {
      core: core,
      baseUrl: origin,
      mcpUrl: runtime.mcp_url,
      consoleUrl: runtime.console_url,
      adminUrl: runtime.admin_url,
      dataDir: config.dataDir,
      invoke: core.invoke,
      /** invoke as the console in the app's window: for in-process callers (tests, embedders) */
      dispatch: core.dispatch,
      /** the live feed as the desk (tray, window) gets it: staged writes masked, with their `blocked` reason */
      events: {
        subscribe: (listener: (e: ApiEvent) => void) =>
          core.events.subscribe((e) => listener(deskEvent(e, (x) => core.staging.blockOf(x)))),
      },
      vaultLabel: core.vault.label,
      /** open notification channels (GET streams and subscriptions/listen) of MCP clients */
      notificationChannels: () => mcp.lists.size,
      /** a fresh one-time console login link */
      loginUrl: () => `${origin}${CONSOLE_PATH}login?code=${auth.issueLoginCode()}`,
      async createToken(input: TokenCreateInput) {
        const r = await core.dispatch('tokens.create', input);
        if (!r.ok) throw new GatehouseError(r.code, r.message);
        return r.data;
      },
      async revokeToken(id: string) {
        const r = await core.dispatch('tokens.revoke', { id });
        if (!r.ok) throw new GatehouseError(r.code, r.message);
      },
      stop(): Promise<void> {
        stopping ??= (async () => {
          // runtime.json goes first, so a CLI starting now works on the files instead of a closing service
          if (config.writeRuntimeFile !== false) await removeRuntime(config.dataDir, process.pid);
          // notification streams end with their closing event before the connections are cut
          await mcp.endStreams();
          await new Promise<void>((resolve) => {
            listening.close(() => resolve());
            listening.closeAllConnections();
          });
          await mcp.close();
          await core.close();
        })();
        return stopping;
      },
    };
  } catch (e) {
    server?.close();
    await core.close();
    throw e;
  }
}
export type RunningService = Awaited<ReturnType<typeof startService>>;

/**
 * The MCP endpoint, its code (the MCP SDK, most of the service's bytes)
 * imported once the service listens rather than before: `serve` is ready
 * sooner, and a request that comes first waits for the import.
 */
function lazyEndpoint(deps: EndpointDeps) {
  let endpoint: Promise<ReturnType<typeof createMcpEndpoint>> | null = null;
  let loaded: ReturnType<typeof createMcpEndpoint> | null = null;
  const load = () => (endpoint ??= import('./mcp/endpoint.ts').then((m) => (loaded = m.createMcpEndpoint(deps))));
  return {
    /** open notification channels; none before the endpoint has loaded */
    lists: {
      get size() {
        return loaded?.lists.size ?? 0;
      },
    },
    warm: () =>
      void load().catch((e: unknown) =>
        deps.log.error('loading the MCP endpoint failed', { error: (e as Error).message }),
      ),
    handle: async (req: IncomingMessage, res: ServerResponse) => (await load()).handle(req, res),
    endStreams: async () => {
      if (endpoint) await (await endpoint).endStreams();
    },
    close: async () => {
      if (endpoint) await (await endpoint).close();
    },
  };
}
