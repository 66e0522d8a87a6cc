import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MCP_PATH, CONSOLE_PATH, ADMIN_PREFIX, DEFAULT_PORT, type RuntimeInfo } from './contract/health.ts';
import type { TokenCreateInput } from './contract/tokens.ts';
import { GatehouseError } from './core/errors.ts';
import { writeRuntime, removeRuntime } from './store/runtime-file.ts';
import { BodyBudget } from './lib/http/body.ts';
import { createEdgeServer, type ServerLimits } from './lib/http/server.ts';

/**
 * The local service's connection caps. It listens on loopback, where every caller is one person's own
 * program (fifty agents each hold a notification stream and a keep-alive pool), so there is no cap per
 * address, which would be the whole service's; the total is 1,024 (`serve --max-connections N`). Over
 * it, a client is answered 503 with Retry-After (main/lib/http/server.ts), never reset.
 */
export const LOCAL_SERVER_LIMITS: ServerLimits = { maxConnections: 1024, maxConnectionsPerAddress: 0 };
import { AdminAuth } from './rest/admin-auth.ts';
import { openLocalCore, type LocalCoreConfig } from './local-core.ts';
import { VERSION } from './version.ts';
import type { HttpFace, HttpFaceDeps } from './http-face.ts';

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

/** The headless service: the gateway plus its HTTP face, runtime.json and a clean stop. */
export async function startService(config: ServiceConfig) {
  const core = await openLocalCore({ ...config, owner: 'service' });
  const host = config.host ?? '127.0.0.1';
  let server: HttpServer | null = null;
  try {
    if (config.enable) await core.settings.update({ enabled: true });
    const auth = await AdminAuth.open(core.vault, core.tokens, core.sessions);
    core.approvalLinks.useKey(auth.approvalLinkKey());
    const bodyBudget = new BodyBudget(config.limits?.bodyBudgetBytes);
    let origin = '';
    const face = lazyFace({
      core,
      host,
      auth,
      bodyBudget,
      origin: () => origin,
      ...(config.allowedHosts ? { allowedHosts: config.allowedHosts } : {}),
      ...(config.consoleDir ? { consoleDir: config.consoleDir } : {}),
    });
    server = createEdgeServer((req, res) => void face.route(req, res), { ...LOCAL_SERVER_LIMITS, ...config.limits });
    const port = await listen(server, config.port ?? DEFAULT_PORT, host);
    origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    core.setUrls(origin);
    const runtime = runtimeOf(origin, core);
    if (config.writeRuntimeFile !== false) await writeRuntime(config.dataDir, runtime);
    ready(core, face);
    return serviceHandle({ config, core, auth, bodyBudget, face, server, runtime });
  } catch (e) {
    server?.close();
    await core.close();
    throw e;
  }
}

type LocalCore = Awaited<ReturnType<typeof openLocalCore>>;

/**
 * The HTTP face (router, REST, console, MCP endpoint), imported once the service listens (see http-face.ts): every
 * request waits for it; one that finds it unloadable is answered 500.
 */
function lazyFace(deps: HttpFaceDeps) {
  let face: Promise<HttpFace> | null = null;
  let loaded: HttpFace | null = null;
  const load = () => (face ??= import('./http-face.ts').then((m) => (loaded = m.createHttpFace(deps))));
  return {
    load,
    /** the face once it loaded, else null */
    loaded: () => loaded,
    /** the face when its load was started (and did not fail), else null: nothing is loaded only to be stopped */
    started: async () => (face ? await face.catch(() => null) : null),
    route: (req: IncomingMessage, res: ServerResponse) =>
      load().then(
        (f) => f.route(req, res),
        (e: unknown) => {
          deps.core.log.error('loading the HTTP face failed', { error: (e as Error).message });
          if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
          res.end('Gatehouse could not load its HTTP code; see the service log.\n');
        },
      ),
  };
}
type LazyFace = ReturnType<typeof lazyFace>;

/** Listens, and answers the port; a port in use is a conflict that says what to do. */
async function listen(server: HttpServer, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(
        e.code === 'EADDRINUSE'
          ? new GatehouseError(
              'conflict',
              `port ${port} on ${host} is in use: pick another with --port (0 = any free port)`,
            )
          : e,
      ),
    );
    server.listen(port, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

function runtimeOf(origin: string, core: LocalCore): RuntimeInfo {
  return {
    pid: process.pid,
    base_url: origin,
    mcp_url: `${origin}${MCP_PATH}`,
    console_url: `${origin}${CONSOLE_PATH}`,
    admin_url: `${origin}${ADMIN_PREFIX}`,
    version: VERSION,
    started: new Date(core.clock.now()).toISOString(),
  };
}

/** What starts once the service listens and runtime.json says where. */
function ready(core: LocalCore, face: LazyFace): void {
  // Ready: the endpoint's code (the MCP SDK) loads now, in the background, before a client is likely to ask;
  // then the upstreams connect (their client SDK loads at the first connect).
  void face
    .load()
    .then((f) => f.mcp.warm())
    .catch(() => undefined);
  core.startUpstreams();
  // A stored policy that cannot be used refuses every call: said in the log and the health report, not silently.
  void core.checkPolicy().catch(() => undefined);
  // Audit files past their retention go at every start too, not only from the hourly job.
  void core.sweepAudit().catch((e: unknown) => core.log.warn('audit: the start sweep failed', { error: String(e) }));
}

interface Running {
  config: ServiceConfig;
  core: LocalCore;
  auth: AdminAuth;
  bodyBudget: BodyBudget;
  face: LazyFace;
  server: HttpServer;
  runtime: RuntimeInfo;
}

/** The running service as its callers (the CLI's serve, the app, tests) hold it. */
function serviceHandle(r: Running) {
  const { config, core, auth, bodyBudget, face, runtime } = r;
  const origin = runtime.base_url;
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
    events: { subscribe: core.assembled.desk.subscribe },
    vaultLabel: core.vault.label,
    /** open notification channels (GET streams and subscriptions/listen) of MCP clients */
    notificationChannels: () => face.loaded()?.mcp.lists.size ?? 0,
    /** bytes of request bodies being read now that count against the body budget (limits.bodyBudgetBytes) */
    bodyBytesInUse: () => bodyBudget.inUse,
    /** a fresh one-time console login link */
    loginUrl: () => `${origin}${CONSOLE_PATH}login?code=${auth.issueLoginCode()}`,
    async createToken(input: TokenCreateInput) {
      const res = await core.dispatch('tokens.create', input);
      if (!res.ok) throw new GatehouseError(res.code, res.message);
      return res.data;
    },
    async revokeToken(id: string) {
      const res = await core.dispatch('tokens.revoke', { id });
      if (!res.ok) throw new GatehouseError(res.code, res.message);
    },
    stop(): Promise<void> {
      return (stopping ??= stopService(r));
    },
  };
}

async function stopService({ config, core, face, server }: Running): Promise<void> {
  // runtime.json goes first, so a CLI starting now works on the files instead of a closing service
  if (config.writeRuntimeFile !== false) await removeRuntime(config.dataDir, process.pid);
  // notification streams end with their closing event before the connections are cut
  const f = await face.started();
  await f?.mcp.endStreams();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  await f?.mcp.close();
  await core.close();
}
export type RunningService = Awaited<ReturnType<typeof startService>>;
