import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { MCP_PATH, CONSOLE_PATH, ADMIN_PREFIX } from './contract/health.ts';
import type { EndpointDeps, createMcpEndpoint } from './mcp/endpoint.ts';
import { RateLimiter } from './lib/rate-limiter.ts';
import { allowedHostnames } from './lib/http/host.ts';
import type { BodyBudget } from './lib/http/body.ts';
import type { AdminAuth } from './rest/admin-auth.ts';
import { createAdminRoutes } from './rest/admin-routes.ts';
import { createRouter } from './rest/http-router.ts';
import type { openLocalCore } from './local-core.ts';
import { VERSION } from './version.ts';
import { PACKAGE_ROOT } from './package-root.ts';

const DEFAULT_CONSOLE_DIR = join(PACKAGE_ROOT, 'dist-renderer');

export interface HttpFaceDeps {
  core: Awaited<ReturnType<typeof openLocalCore>>;
  host: string;
  allowedHosts?: string[];
  consoleDir?: string;
  bodyBudget: BodyBudget;
  auth: AdminAuth;
  /** the service's origin, once it listens */
  origin(): string;
}

/**
 * The service's HTTP face: the router, the admin and local REST, the console
 * and the MCP endpoint. Imported by main/service.ts once the service listens,
 * not before (it brings the MCP server SDK, for the Host and Origin rules, and
 * the endpoint after it): \`serve\` is ready sooner, and a request that comes
 * first waits for the import.
 */
export function createHttpFace({ core, host, auth, bodyBudget, origin, ...config }: HttpFaceDeps) {
  const allowedHosts = allowedHostnames(host, config.allowedHosts);
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
    resourceUpdates: (listener) => core.upstreams.onResourceUpdated(listener),
    upstreamLogs: (listener) => core.upstreams.onLog(listener),
    tasks: { staging: core.staging, approvalUrl: (id) => core.approvalLinks.urlFor(id) },
  });
  const actions = createAdminRoutes({
    invoke: core.invoke,
    auth,
    origin,
    log: core.log,
    bodyBudget,
    failures: new RateLimiter(),
    now: () => core.clock.now(),
    trustProxy: () => core.settings.get().trust_proxy_headers,
  });
  const info = () => ({
    name: 'gatehouse',
    version: VERSION,
    base_url: origin(),
    mcp_url: `${origin()}${MCP_PATH}`,
    console_url: `${origin()}${CONSOLE_PATH}`,
    admin_url: `${origin()}${ADMIN_PREFIX}`,
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

  return { route, mcp };
}
export type HttpFace = ReturnType<typeof createHttpFace>;

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
