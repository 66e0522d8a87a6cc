import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createMcpHandler,
  type AuthInfo,
  type JSONRPCMessage,
  type ServerEventBus,
} from '@modelcontextprotocol/server';
import type { ErrorCode } from '../contract/errors.ts';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/logger.ts';
import type { Tokens } from '../core/identity/tokens.ts';
import type { RateLimiter } from '../lib/rate-limiter.ts';
import type { Auditor } from '../core/calls/auditor.ts';
import type { CallContext } from '../core/calls/tool.ts';
import { capabilitiesOf } from '../core/identity/users.ts';
import { HttpError } from '../lib/http/http-error.ts';
import { ANSWERED, compose } from '../lib/http/compose.ts';
import { jsonRpcEnvelope } from '../lib/http/envelope.ts';
import { sendError } from '../lib/http/send.ts';
import { DEFAULT_MAX_BODY, type BodyBudget } from '../lib/http/body.ts';
import { buildServer, type ServerDeps, type ServerListing } from './server-factory.ts';
import { tokenHolder } from './surface-handlers.ts';
import type { PolicyListing } from '../core/policy/policy-listing.ts';
import { ListChanges } from './list-changed.ts';
import { MAX_SUBSCRIPTIONS_PER_TOKEN } from './resource-subscriptions.ts';
import { openEventStream } from './event-stream.ts';
import {
  authGuard,
  bodyGuard,
  corsGuard,
  enabledGuard,
  hostGuard,
  mcpRequestOf,
  methodGuard,
  tokenRateGuard,
  type McpRequest,
} from './guards.ts';
import { Exchange2025 } from './exchange-2025.ts';
import { serveThroughSdk } from './web-exchange.ts';
import { RefusalAudit } from './refusal-audit.ts';
import { ClientNames } from './client-names.ts';
import { endListenStream } from './listen-close.ts';
import { requestTarget } from '../lib/http/url.ts';
import { UPSTREAM_LOOKUP_PATH, upstreamOfMcpPath } from '../contract/remote-upstreams.ts';
import type { ProfileSet, Registry } from '../core/calls/registry.ts';
import type { Pipeline } from '../core/calls/pipeline.ts';
import { createUpstreamLookup } from './upstream-lookup.ts';
import { upstreamViewDeps } from './upstream-view.ts';
import { ClientCapabilities } from './client-capabilities.ts';
import { RequestLogTaps } from './upstream-logs.ts';
import type { LogLevel, LogMessage } from '../plugins/upstream/log-relay.ts';
import { Routes2025, type CallRoute } from './routes-2025.ts';

export interface EndpointDeps extends ServerDeps {
  /** the whole registry and pipeline: the endpoint also watches changes and serves the upstream views from them */
  registry: Registry;
  pipeline: Pipeline;
  /** tools/list by the policy, and the policy's revision for list_changed */
  listing: ServerListing & Pick<PolicyListing, 'revision'>;
  tokens: Tokens;
  limiter: RateLimiter;
  auditor: Auditor;
  clock: Clock;
  log: Logger;
  allowedHosts: ReadonlySet<string>;
  /** calls back on every change of what a token may see (settings, a token revoked, a user's role); returns the unsubscribe */
  watchSettings: (listener: () => void) => () => void;
  maxBody?: number;
  /** memory shared by every body being read at once (with the admin API's) */
  bodyBudget?: BodyBudget;
  /** the HTTP upstreams configured (id and URL), for `gatehouse-bridge --remote URL` (upstream-lookup.ts); none when absent */
  remotes?: () => ReadonlyArray<{ id: string; url: string }>;
  /** tokens' profiles, for the same lookup */
  profileOf?: (name: string) => ProfileSet | undefined;
  /** hears every subscribed upstream resource's update (the URI clients use); returns the unsubscribe */
  resourceUpdates?: (listener: (uri: string) => void) => () => void;
  /** hears every upstream's log messages (named, masked, bounded: log-relay.ts); returns the unsubscribe */
  upstreamLogs?: (listener: (upstream: string, message: LogMessage) => void) => () => void;
}

/** What the endpoint needs of the core (main/assemble-core.ts builds it once); the HTTP face adds the limiter, the Host rule, the body budget and the log. */
export type EndpointCore = Omit<
  EndpointDeps,
  'limiter' | 'log' | 'allowedHosts' | 'maxBody' | 'bodyBudget' | 'subscriptions'
>;

/**
 * The MCP endpoint: one small guard per concern from main/lib/http, composed
 * here in order, cheapest and least trusting first: Host, Origin/CORS,
 * preflight, method, gateway switched on, bearer token, the token's rate
 * limit — all before a byte of the body is read — then Content-Type, body
 * size, JSON (nesting-limited), and the JSON-RPC checks. Every refusal is a
 * JSON-RPC error with `data: {code, request_id}`, audited at a bounded rate.
 * Then: a GET gets the notification stream; a 2025-era message is served on
 * Node directly (JSON unless the call streams); a 2026-07-28 one goes to the
 * SDK's handler, which also serves `subscriptions/listen`.
 */
export function createMcpEndpoint(deps: EndpointDeps) {
  const endpoint = new McpEndpoint(deps);
  return {
    handle: (req: IncomingMessage, res: ServerResponse) => endpoint.handle(req, res),
    lists: endpoint.lists,
    /** Ends every notification stream as the spec ends one (listen-close.ts) and waits, at most `ms`, for them to be sent. */
    endStreams: (ms = 1000) => endpoint.endStreams(ms),
    close: () => endpoint.close(),
  };
}

/** What each token may see changing, told to its notification channels. */
function listChangesOf(deps: EndpointDeps): ListChanges {
  return new ListChanges({
    registry: deps.registry,
    settings: deps.settings,
    viewerOf: (tokenId) => {
      const v = deps.tokens.byId(tokenId);
      return v ? { capabilities: capabilitiesOf(v.user.role), scope: v.record.scope } : null;
    },
    viewRegistry: (view) => upstreamViewDeps(deps, view).registry,
    policyRevision: () => deps.listing.revision(),
    releaseSubscriptions: (tokenId, uris) =>
      uris.forEach((uri) => void deps.pipeline.surfaces.unsubscribe(uri, tokenHolder(tokenId)).catch(() => undefined)),
  });
}

/** One MCP endpoint's parts, built once (createMcpEndpoint); `handle` serves each request with them. */
class McpEndpoint {
  readonly lists: ListChanges;
  private readonly unwatch: Array<() => void>;
  private readonly served: EndpointDeps;
  private readonly lookup: ReturnType<typeof createUpstreamLookup>;
  private readonly sdk: ReturnType<typeof sdkHandler>;
  private readonly maxBody: number;
  private readonly clients = new ClientNames();
  private readonly declared = new ClientCapabilities();
  private readonly routes = new Routes2025();
  private readonly refusals: RefusalAudit;
  /** open notification streams, so shutdown can end them with their last event before connections are cut */
  private readonly streams = new Set<ServerResponse>();
  private readonly guards: ReturnType<typeof compose<McpRequest>>;
  private listens = 0;

  constructor(private readonly deps: EndpointDeps) {
    const maxBody = deps.maxBody ?? DEFAULT_MAX_BODY;
    this.lists = listChangesOf(deps);
    const taps = new RequestLogTaps();
    this.unwatch = watchChanges(deps, this.lists, taps);
    this.served = servedDeps(deps, this.lists, taps);
    this.lookup = createUpstreamLookup({
      ...deps,
      now: () => deps.clock.now(),
      remotes: deps.remotes ?? (() => []),
      profileOf: deps.profileOf ?? (() => undefined),
    });
    this.maxBody = maxBody;
    this.sdk = sdkHandler((ctx, view) => this.factory(ctx, view), this.lists.quietBus, maxBody, deps.log);
    this.refusals = new RefusalAudit(deps.auditor, deps.clock);
    this.guards = compose<McpRequest>(
      hostGuard(deps.allowedHosts),
      corsGuard,
      methodGuard,
      enabledGuard,
      authGuard(deps.tokens, deps.limiter),
      tokenRateGuard(deps.limiter),
      bodyGuard(maxBody, deps.bodyBudget),
    );
  }

  /** Ends every notification stream as the spec ends one (listen-close.ts) and waits, at most `ms`, for them to be sent. */
  endStreams(ms: number): Promise<void> {
    return endStreams([...this.streams], this.lists, ms);
  }

  async close(): Promise<void> {
    for (const u of this.unwatch) u();
    this.lists.closeAll();
    await this.sdk.close();
  }

  /** A view is one upstream's own endpoint (upstream-view.ts); none is the main endpoint. */
  private factory(ctx: CallContext, view?: string) {
    return buildServer(ctx, view ? upstreamViewDeps(this.served, view) : this.served);
  }

  private holdStream(res: ServerResponse): void {
    this.streams.add(res);
    res.once('close', () => this.streams.delete(res));
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = pathOf(req);
    if (path === UPSTREAM_LOOKUP_PATH) return this.lookup(req, res);
    const view = upstreamOfMcpPath(path) ?? undefined;
    const c = requestOf(req, res, this.deps);
    const stop = await this.guards(c).catch((e: unknown): typeof ANSWERED => {
      // a body the client cut off: nothing to answer
      if (res.destroyed || req.destroyed) return ANSWERED;
      throw e;
    });
    if (stop === ANSWERED) return;
    const audit = (code: ErrorCode) => this.refusals.record(refusalOf(c, code));
    if (stop) return refuse(c, stop, audit);
    if (c.stream) {
      if (!openEventStream(req, res, c.auth!.record.id, this.lists, view)) busy(c, audit);
      else this.holdStream(res);
      return;
    }
    return this.serveMessage(c, view, audit);
  }

  /** A JSON-RPC message that passed the guards: to its era's server, or to the call in flight it answers. */
  private async serveMessage(c: McpRequest, view: string | undefined, audit: (code: ErrorCode) => void) {
    const { req, res } = c;
    const rpc = c.rpc!;
    const record = c.auth!.record;
    const ctx = this.callContextOf(c);
    this.deps.tokens.touch(record, ctx.client);
    const authInfo: AuthInfo = {
      token: record.id,
      clientId: record.id,
      scopes: [],
      extra: { ctx, ...(view ? { view } : {}) },
    };
    if (rpc.era === '2025') return this.serveLegacy(c, ctx, authInfo, view, audit);
    if (rpc.message.method === 'subscriptions/listen') return this.serveListen(c, ctx, authInfo, view, audit);
    const refused = await serveThroughSdk(this.sdk, req, res, rpc.message, authInfo, c.requestId);
    if (refused) audit(refused);
  }

  /** Who is calling, as the tools see it: the 2025-era capabilities are those its initialize declared. */
  private callContextOf(c: McpRequest): CallContext {
    const rpc = c.rpc!;
    const { record, user } = c.auth!;
    const client = this.clients.name(c.req, rpc.message, record.id, c.address);
    const remembered = rpc.era === '2025' ? this.declared.seen(rpc.message, record.id) : undefined;
    return {
      user,
      capabilities: capabilitiesOf(user.role),
      token: record,
      request_id: c.requestId,
      client: client.name,
      client_source: client.source,
      ...(remembered ? { clientCapabilities: remembered } : {}),
    };
  }

  private serveLegacy(
    c: McpRequest,
    ctx: CallContext,
    authInfo: AuthInfo,
    view: string | undefined,
    audit: (code: ErrorCode) => void,
  ): Promise<void> | void {
    const { res } = c;
    const rpc = c.rpc!;
    const record = c.auth!.record;
    // A 2025 client's answer to what a call in flight asked it, or its cancellation of that call: to that exchange.
    if (this.routes.route(record.id, rpc.message)) return void res.writeHead(202).end();
    // The call's cancellation route, taken now (before any await): at most MAX_OPEN_CALLS_PER_TOKEN per token.
    const route =
      rpc.message.method !== undefined && rpc.message.id !== undefined
        ? this.routes.open(record.id, rpc.message.id)
        : undefined;
    if (route instanceof HttpError) {
      audit(route.code);
      return sendError(res, route, jsonRpcEnvelope, { requestId: c.requestId, rpcId: c.rpcId });
    }
    return this.serve2025(res, rpc.message as JSONRPCMessage, ctx, authInfo, view, route);
  }

  private async serveListen(
    c: McpRequest,
    ctx: CallContext,
    authInfo: AuthInfo,
    view: string | undefined,
    audit: (code: ErrorCode) => void,
  ): Promise<void> {
    const { req, res } = c;
    const rpc = c.rpc!;
    const record = c.auth!.record;
    // The SDK holds this stream open and subscribes it to the bus of its handler, one made for this request: so the
    // stream is the token's (ListChanges.attach then ends the token's oldest stream past its bound).
    if (!this.lists.hasRoomFor(record.id)) return busy(c, audit);
    this.holdStream(res);
    const resources = await this.listenSubscriptions(rpc.message.params, ctx, view);
    const bus = this.lists.busFor(record.id, () => endListenStream(res, rpc.message.id!), view, resources?.uris);
    const handler = sdkHandler((ctx, v) => this.factory(ctx, v), bus, this.maxBody, this.deps.log);
    try {
      await serveThroughSdk(handler, req, res, rpc.message, authInfo, c.requestId);
    } finally {
      await handler.close();
      // Released however the request ended: its stream over, or refused by the SDK before one opened (a malformed
      // listen), which would otherwise hold them for good.
      resources?.ended();
    }
  }

  /**
   * A 2026-07-28 listen stream's `resourceSubscriptions`: each upstream resource it names that the caller may
   * subscribe to is subscribed at its upstream for as long as the stream lasts (one the caller may not is left out,
   * and hears nothing). Undefined when it names none or subscriptions are not offered.
   */
  private async listenSubscriptions(
    params: unknown,
    ctx: CallContext,
    view?: string,
  ): Promise<{ uris: ReadonlySet<string>; ended: () => void } | undefined> {
    const asked = (params as { notifications?: { resourceSubscriptions?: unknown } } | undefined)?.notifications
      ?.resourceSubscriptions;
    if (!this.deps.resourceUpdates || !Array.isArray(asked) || asked.length === 0) return undefined;
    const surfaces = view ? upstreamViewDeps(this.served, view).pipeline.surfaces : this.deps.pipeline.surfaces;
    const holder = `listen:${++this.listens}`;
    const uris = new Set<string>();
    for (const uri of asked.slice(0, MAX_SUBSCRIPTIONS_PER_TOKEN))
      if (typeof uri === 'string' && !uris.has(uri))
        await surfaces.subscribe(uri, holder, ctx).then(
          () => uris.add(uri),
          () => undefined,
        );
    return {
      uris,
      ended: () => uris.forEach((uri) => void surfaces.unsubscribe(uri, holder).catch(() => undefined)),
    };
  }

  private async serve2025(
    res: ServerResponse,
    message: JSONRPCMessage,
    ctx: CallContext,
    authInfo: AuthInfo,
    view?: string,
    route?: CallRoute,
  ): Promise<void> {
    const server = this.factory(ctx, view);
    const exchange = new Exchange2025(res, ctx.request_id, authInfo, this.routes);
    try {
      await server.connect(exchange);
      await exchange.serve(message, route);
    } finally {
      route?.close();
      void server.close().catch(() => {});
    }
  }
}

/** The request's path; a target the router would refuse names no view (the guards answer it). */
function pathOf(req: IncomingMessage): string {
  try {
    return requestTarget(req).path;
  } catch {
    return '';
  }
}

/** What the guards read and fill in for one request. */
const requestOf = (req: IncomingMessage, res: ServerResponse, deps: EndpointDeps): McpRequest =>
  mcpRequestOf(req, res, deps.settings(), deps.clock.now());

function refusalOf(c: McpRequest, code: ErrorCode) {
  return {
    code,
    requestId: c.requestId,
    address: c.address,
    token: c.auth
      ? { id: c.auth.record.id, preview: c.auth.record.preview, user_id: c.auth.user.id, login: c.auth.user.login }
      : null,
  };
}

/** A guard's refusal, audited and answered. */
function refuse(c: McpRequest, stop: HttpError, audit: (code: ErrorCode) => void): void {
  const { req, res } = c;
  audit(stop.code);
  // Refused before its body was read: close the connection after the answer instead of reading the rest.
  const unread =
    !req.readableEnded && (Number(req.headers['content-length']) > 0 || req.headers['transfer-encoding'] !== undefined);
  return sendError(res, unread ? stop.withHeaders({ Connection: 'close' }) : stop, jsonRpcEnvelope, {
    requestId: c.requestId,
    rpcId: c.rpcId,
  });
}

function busy(c: McpRequest, audit: (code: ErrorCode) => void): void {
  const refusal = new HttpError('service_unavailable', 'too many notification streams are open: retry later', {
    headers: { 'Retry-After': '30' },
  });
  audit(refusal.code);
  sendError(c.res, refusal, jsonRpcEnvelope, { requestId: c.requestId, rpcId: c.rpcId });
}

/** Everything that changes what a token sees, or that it hears, told to the list changes; answers the unsubscribes. */
function watchChanges(deps: EndpointDeps, lists: ListChanges, taps: RequestLogTaps): Array<() => void> {
  return [
    deps.registry.onChange(() => lists.changed()),
    deps.watchSettings(() => lists.changed()),
    ...(deps.resourceUpdates ? [deps.resourceUpdates((uri) => lists.resourceUpdated(uri))] : []),
    // 2025 era: the GET streams of the tokens that see the upstream; 2026-07-28: the requests that asked for them
    ...(deps.upstreamLogs
      ? [
          deps.upstreamLogs((upstream, m) => {
            lists.logMessage(upstream, m);
            taps.deliver(upstream, m);
          }),
        ]
      : []),
  ];
}

/** What each server is built with: subscriptions and logs offered only when there is a source of them. */
function servedDeps(deps: EndpointDeps, lists: ListChanges, taps: RequestLogTaps): EndpointDeps {
  // Updates reach a subscriber on its channels: without a source of updates, subscriptions are not offered.
  const subscribed = deps.resourceUpdates ? { ...deps, subscriptions: lists.subscriptions } : deps;
  return deps.upstreamLogs
    ? {
        ...subscribed,
        logs: {
          setLevel: (t: string, l: LogLevel) => lists.setLogLevel(t, l),
          taps,
          channelOf: (t: string) => ({ open: lists.countFor(t) > 0, level: lists.logLevelOf(t) }),
        },
      }
    : subscribed;
}

/**
 * The SDK's handler of 2026-07-28 messages: each request's server is built for the caller the guards found. One serves
 * every request but `subscriptions/listen`, which gets its own (its bus knows whose stream it holds).
 */
function sdkHandler(
  factory: (ctx: CallContext, view?: string) => ReturnType<typeof buildServer>,
  bus: ServerEventBus,
  maxBody: number,
  log: Logger,
) {
  return createMcpHandler(
    (rc) => {
      const { ctx, view } = rc.authInfo?.extra as { ctx: CallContext; view?: string };
      return factory(ctx, view);
    },
    {
      maxRequestBodySize: maxBody,
      bus,
      onerror: (e) => log.debug('mcp handler', { error: e.message }),
    },
  );
}

async function endStreams(open: ServerResponse[], lists: ListChanges, ms: number): Promise<void> {
  lists.closeAll();
  await Promise.race([
    Promise.all(
      open.map((res) =>
        res.writableFinished || res.destroyed
          ? null
          : new Promise((resolve) => res.once('close', resolve).once('finish', resolve)),
      ),
    ),
    new Promise((resolve) => setTimeout(resolve, ms).unref()),
  ]);
}
