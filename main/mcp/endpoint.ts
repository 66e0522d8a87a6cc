import type { IncomingMessage, ServerResponse } from 'node:http';
import { createMcpHandler, CLIENT_INFO_META_KEY } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import type { Clock, Logger } from '../core/ports.ts';
import type { Tokens } from '../core/tokens.ts';
import type { RateLimiter } from '../core/rate-limiter.ts';
import type { Auditor } from '../core/auditor.ts';
import type { CallContext } from '../core/tool.ts';
import { capabilitiesOf } from '../core/users.ts';
import { uuidv7 } from '../core/ids.ts';
import { HttpFailure, isFailure, sendFailure, fail } from './http-failure.ts';
import { checkHost } from './guards/host.ts';
import { answerPreflight, checkOrigin, corsHeaders } from './guards/cors.ts';
import { clientAddress } from './guards/client-address.ts';
import { authenticate } from './guards/auth.ts';
import { applyRateHeaders, rateFailure } from './guards/rate-limit.ts';
import { DEFAULT_MAX_BODY, parseJson, readBody } from './guards/body.ts';
import { buildServer, type ServerDeps } from './server-factory.ts';
import { ListChanges } from './list-changed.ts';
import { openEventStream, wantsEventStream, MAX_STREAMS_PER_TOKEN } from './event-stream.ts';
import { viewerOf } from '../core/registry.ts';

export interface EndpointDeps extends ServerDeps {
  tokens: Tokens;
  /** calls back on every settings change (the visible tool lists may change with it); returns the unsubscribe */
  watchSettings: (listener: () => void) => () => void;
  limiter: RateLimiter;
  auditor: Auditor;
  clock: Clock;
  log: Logger;
  allowedHosts: ReadonlySet<string>;
  maxBody?: number;
}

type Rpc = { id?: string | number | null; method?: string; params?: { name?: string; _meta?: Record<string, unknown> } };

/**
 * The MCP endpoint: one small guard per concern, composed here in order
 * (Host, Origin/CORS, enabled, address block, auth, body size, JSON,
 * per-token rate), then the SDK's handler serving both protocol eras.
 */
export function createMcpEndpoint(deps: EndpointDeps) {
  const maxBody = deps.maxBody ?? DEFAULT_MAX_BODY;
  const lists = new ListChanges({
    registry: deps.registry,
    settings: deps.settings,
    viewerOf: (tokenId) => {
      const v = deps.tokens.byId(tokenId);
      return v ? viewerOf({ capabilities: capabilitiesOf(v.user.role), token: v.record } as CallContext) : null;
    },
  });
  const unwatch = [deps.registry.onChange(() => lists.changed()), deps.watchSettings(() => lists.changed())];
  const sdk = createMcpHandler((rc) => buildServer((rc.authInfo?.extra as { ctx: CallContext }).ctx, deps), {
    maxRequestBodySize: maxBody,
    bus: lists.bus,
    onerror: (e) => deps.log.debug('mcp handler', { error: e.message }),
  });
  const clients = new ClientNames();
  const forward = toNodeHandler(sdk, { maxRequestBodySize: maxBody, onerror: (e) => deps.log.error('mcp adapter failed', { error: e.message }) });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const header = req.headers['x-request-id'];
    const requestId = typeof header === 'string' && /^[\w.:-]{1,128}$/.test(header) ? header : uuidv7(deps.clock.now());
    res.setHeader('X-Request-Id', requestId);
    const settings = deps.settings();
    const refuse = (f: HttpFailure, rpcId: string | number | null = null) => sendFailure(res, f, requestId, rpcId);

    const bad = checkHost(req, deps.allowedHosts) ?? checkOrigin(req, settings.cors, deps.allowedHosts);
    if (bad) return refuse(bad);
    for (const [k, v] of Object.entries(corsHeaders(req, settings.cors))) res.setHeader(k, v);
    if (req.method === 'OPTIONS') {
      const f = answerPreflight(req, res, settings.cors);
      return f ? refuse(f) : undefined;
    }
    const stream = req.method === 'GET' && wantsEventStream(req);
    if (req.method !== 'POST' && !stream) {
      return refuse(new HttpFailure('invalid_request', `${req.method} is not supported on the MCP endpoint: use POST (or GET with Accept: text/event-stream for list-change notifications)`, { Allow: 'GET, POST, OPTIONS' }, 405));
    }
    if (!settings.enabled) return refuse(fail('gateway_disabled', 'the gateway is switched off in Gatehouse settings: switch it on in the console, the tray or with `gatehouse settings set enabled true`'));

    const now = deps.clock.now();
    const address = clientAddress(req, settings.trust_proxy_headers);
    const auth = authenticate(req, deps.tokens);
    if (isFailure(auth)) {
      // Failed authentication spends the address's budget, so guessing tokens is
      // rate limited; a valid token is never held back by someone else's failures
      // (every local client shares 127.0.0.1).
      const d = deps.limiter.check(`addr:${address}`, settings.rate_limit, now);
      return refuse(d.allowed ? auth : rateFailure(d));
    }

    if (stream) {
      const decision = deps.limiter.check(`tok:${auth.record.id}`, settings.rate_limit, now);
      applyRateHeaders(res, decision);
      if (!decision.allowed) return refuse(rateFailure(decision));
      if (!openEventStream(req, res, auth.record.id, lists, { 'X-Request-Id': requestId })) {
        return refuse(new HttpFailure('service_unavailable', 'too many notification streams are open; retry later', { 'Retry-After': '30' }, 503));
      }
      return;
    }

    const body = await readBody(req, maxBody);
    if (isFailure(body)) return refuse(body);
    const parsed = parseJson(body);
    if (isFailure(parsed)) return refuse(parsed);
    const rpc = (Array.isArray(parsed) ? parsed[0] : parsed) as Rpc | undefined;
    const rpcId = typeof rpc?.id === 'string' || typeof rpc?.id === 'number' ? rpc.id : null;

    const ctx: CallContext = {
      user: auth.user,
      capabilities: capabilitiesOf(auth.user.role),
      token: auth.record,
      request_id: requestId,
      client: clients.name(req, rpc, auth.record.id, address),
    };
    const decision = deps.limiter.check(`tok:${auth.record.id}`, settings.rate_limit, now);
    applyRateHeaders(res, decision);
    if (!decision.allowed) {
      if (rpc?.method === 'tools/call') {
        deps.auditor.record({ tool: String(rpc.params?.name ?? 'unknown'), write: false, result: 'rate_limited', error_code: 'rate_limited' }, { request_id: requestId, token_id: auth.record.id, token_preview: auth.record.preview, user_id: auth.user.id, client: ctx.client });
      }
      return refuse(rateFailure(decision), rpcId);
    }
    deps.tokens.touch(auth.record, ctx.client);
    (req as IncomingMessage & { auth?: unknown }).auth = { token: auth.record.id, clientId: auth.record.id, scopes: [], extra: { ctx } };
    if (rpc?.method === 'subscriptions/listen') {
      // The SDK holds this stream open and subscribes it to our bus: name the token it belongs to.
      if (lists.countFor(auth.record.id) >= MAX_STREAMS_PER_TOKEN) lists.oldestFor(auth.record.id)?.close();
      return lists.servingListenFor(auth.record.id, () => res.destroy(), () => forward(req, res, parsed));
    }
    await forward(req, res, parsed);
  }

  return {
    handle,
    lists,
    close: async () => {
      for (const u of unwatch) u();
      lists.closeAll();
      await sdk.close();
    },
  };
}

/**
 * A short client name for the audit log: the MCP clientInfo when the request
 * carries it (every 2026-07-28 request; only `initialize` in the 2025 era, so
 * the last one seen is remembered per token), else User-Agent, else the address.
 */
class ClientNames {
  private readonly byToken = new Map<string, string>();

  name(req: IncomingMessage, rpc: Rpc | undefined, tokenId: string, address: string): string {
    const info = rpc?.params as { clientInfo?: { name?: string }; _meta?: Record<string, { name?: string }> } | undefined;
    const sent = info?.clientInfo?.name ?? info?._meta?.[CLIENT_INFO_META_KEY]?.name;
    if (typeof sent === 'string' && sent) {
      const name = sent.slice(0, 80);
      if (this.byToken.get(tokenId) !== name) {
        this.byToken.delete(tokenId);
        if (this.byToken.size >= 10_000) this.byToken.delete(this.byToken.keys().next().value!);
        this.byToken.set(tokenId, name);
      }
      return name;
    }
    const remembered = this.byToken.get(tokenId);
    if (remembered) return remembered;
    const ua = req.headers['user-agent'];
    return ua ? ua.slice(0, 80) : address;
  }
}
