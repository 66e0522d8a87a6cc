import type { IncomingMessage, ServerResponse } from 'node:http';
import { createMcpHandler, CLIENT_INFO_META_KEY } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import type { Settings } from '../contract/settings.ts';
import type { Clock, Logger } from '../core/ports.ts';
import type { Tokens, Verified } from '../core/tokens.ts';
import type { RateLimiter } from '../core/rate-limiter.ts';
import type { Auditor } from '../core/auditor.ts';
import type { CallContext } from '../core/tool.ts';
import type { ClientSource } from '../contract/audit.ts';
import { capabilitiesOf } from '../core/users.ts';
import { HttpError } from '../lib/http/http-error.ts';
import { ANSWERED, compose, type Guard } from '../lib/http/compose.ts';
import { jsonRpcEnvelope } from '../lib/http/envelope.ts';
import { sendError } from '../lib/http/send.ts';
import { requestId } from '../lib/http/request-id.ts';
import { checkHost } from '../lib/http/host.ts';
import { answerPreflight, checkOrigin, corsHeaders, type CorsPolicy } from '../lib/http/cors.ts';
import { clientAddress } from '../lib/http/client-address.ts';
import { checkRate, rateLimitedError } from '../lib/http/rate-limit.ts';
import { DEFAULT_MAX_BODY, readBody, type BodyBudget } from '../lib/http/body.ts';
import { parseJson } from '../lib/http/json.ts';
import { authenticate } from './bearer-auth.ts';
import { buildServer, type ServerDeps } from './server-factory.ts';

export interface EndpointDeps extends ServerDeps {
  tokens: Tokens;
  limiter: RateLimiter;
  auditor: Auditor;
  clock: Clock;
  log: Logger;
  allowedHosts: ReadonlySet<string>;
  maxBody?: number;
  /** memory shared by every body being read at once (with the admin API's) */
  bodyBudget?: BodyBudget;
}

type Rpc = { id?: string | number | null; method?: string; params?: { name?: string; _meta?: Record<string, unknown> } };

/** What the guards learn about one request, in the order they learn it. */
interface McpRequest {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  settings: Settings;
  now: number;
  rpcId: string | number | null;
  auth?: Verified;
  parsed?: unknown;
  rpc?: Rpc;
  client?: { name: string; source: ClientSource };
}

const ALLOW_HEADERS = 'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID, X-Request-Id';
const EXPOSE_HEADERS = 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, X-Request-Id';
const corsPolicy = (s: Settings): CorsPolicy => ({ origins: s.cors, methods: 'POST, OPTIONS', allowHeaders: ALLOW_HEADERS, exposeHeaders: EXPOSE_HEADERS });

/**
 * The MCP endpoint: one small guard per concern from main/lib/http, composed
 * here in order (Host, Origin/CORS, preflight, method, enabled, auth, body,
 * JSON, per-token rate), then the SDK's handler serving both protocol eras.
 * Refusals are JSON-RPC errors with `data: {code, request_id}`.
 */
export function createMcpEndpoint(deps: EndpointDeps) {
  const maxBody = deps.maxBody ?? DEFAULT_MAX_BODY;
  const sdk = createMcpHandler((rc) => buildServer((rc.authInfo?.extra as { ctx: CallContext }).ctx, deps), {
    maxRequestBodySize: maxBody,
    onerror: (e) => deps.log.debug('mcp handler', { error: e.message }),
  });
  const clients = new ClientNames();
  const forward = toNodeHandler(sdk, { maxRequestBodySize: maxBody, onerror: (e) => deps.log.error('mcp adapter failed', { error: e.message }) });

  const host: Guard<McpRequest> = (c) => checkHost(c.req, deps.allowedHosts) ?? checkOrigin(c.req, c.settings.cors, deps.allowedHosts);
  const cors: Guard<McpRequest> = (c) => {
    for (const [k, v] of Object.entries(corsHeaders(c.req, corsPolicy(c.settings)))) c.res.setHeader(k, v);
    if (c.req.method === 'OPTIONS') return answerPreflight(c.req, c.res, corsPolicy(c.settings)) ?? ANSWERED;
  };
  const postOnly: Guard<McpRequest> = (c) => {
    if (c.req.method !== 'POST') return new HttpError('invalid_request', `${c.req.method} is not supported on the MCP endpoint: use POST`, { status: 405, headers: { Allow: 'POST, OPTIONS' } });
  };
  const enabled: Guard<McpRequest> = (c) => {
    if (!c.settings.enabled) return new HttpError('gateway_disabled', 'the gateway is switched off in Gatehouse settings: switch it on in the console, the tray or with `gatehouse settings set enabled true`');
  };
  const auth: Guard<McpRequest> = (c) => {
    const verified = authenticate(c.req, deps.tokens);
    if (!(verified instanceof HttpError)) {
      c.auth = verified;
      return;
    }
    // Failed authentication spends the address's budget, so guessing tokens is
    // rate limited; a valid token is never held back by someone else's failures
    // (every local client shares 127.0.0.1).
    const d = deps.limiter.check(`addr:${clientAddress(c.req, c.settings.trust_proxy_headers)}`, c.settings.rate_limit, c.now);
    return d.allowed ? verified : rateLimitedError(d);
  };
  const body: Guard<McpRequest> = async (c) => {
    c.parsed = parseJson(await readBody(c.req, { limit: maxBody, ...(deps.bodyBudget ? { budget: deps.bodyBudget } : {}) }));
    const rpc = (Array.isArray(c.parsed) ? c.parsed[0] : c.parsed) as Rpc | undefined;
    c.rpc = rpc !== null && typeof rpc === 'object' ? rpc : undefined;
    c.rpcId = typeof c.rpc?.id === 'string' || typeof c.rpc?.id === 'number' ? c.rpc.id : null;
  };
  const tokenRate: Guard<McpRequest> = (c) => {
    const a = c.auth!;
    c.client = clients.name(c.req, c.rpc, a.record.id, clientAddress(c.req, c.settings.trust_proxy_headers));
    const refused = checkRate(c.res, deps.limiter, `tok:${a.record.id}`, c.settings.rate_limit, c.now);
    if (refused && c.rpc?.method === 'tools/call') {
      deps.auditor.record({ tool: String(c.rpc.params?.name ?? 'unknown'), write: false, result: 'rate_limited', error_code: 'rate_limited' }, { request_id: c.requestId, token_id: a.record.id, token_preview: a.record.preview, user_id: a.user.id, client: c.client.name, client_source: c.client.source });
    }
    return refused;
  };
  const guards = compose<McpRequest>(host, cors, postOnly, enabled, auth, body, tokenRate);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const now = deps.clock.now();
    const c: McpRequest = { req, res, requestId: requestId(req, res, now), settings: deps.settings(), now, rpcId: null };
    const stop = await guards(c);
    if (stop === ANSWERED) return;
    if (stop) return sendError(res, stop, jsonRpcEnvelope, { requestId: c.requestId, rpcId: c.rpcId });

    const { record, user } = c.auth!;
    const ctx: CallContext = { user, capabilities: capabilitiesOf(user.role), token: record, request_id: c.requestId, client: c.client!.name, client_source: c.client!.source };
    deps.tokens.touch(record, ctx.client);
    (req as IncomingMessage & { auth?: unknown }).auth = { token: record.id, clientId: record.id, scopes: [], extra: { ctx } };
    await forward(req, res, c.parsed);
  }

  return { handle, close: () => sdk.close() };
}

/**
 * A short client name for the audit log: the MCP clientInfo when the request
 * carries it (every 2026-07-28 request; only `initialize` in the 2025 era, so
 * the last one seen is remembered per token), else User-Agent, else the address.
 * Anything but the request's own clientInfo is a guess, and `source` says so.
 */
class ClientNames {
  private readonly byToken = new Map<string, string>();

  name(req: IncomingMessage, rpc: Rpc | undefined, tokenId: string, address: string): { name: string; source: ClientSource } {
    const info = rpc?.params as { clientInfo?: { name?: string }; _meta?: Record<string, { name?: string }> } | undefined;
    const sent = info?.clientInfo?.name ?? info?._meta?.[CLIENT_INFO_META_KEY]?.name;
    if (typeof sent === 'string' && sent) {
      const name = sent.slice(0, 80);
      if (this.byToken.get(tokenId) !== name) {
        this.byToken.delete(tokenId);
        if (this.byToken.size >= 10_000) this.byToken.delete(this.byToken.keys().next().value!);
        this.byToken.set(tokenId, name);
      }
      return { name, source: 'request' };
    }
    const remembered = this.byToken.get(tokenId);
    if (remembered) return { name: remembered, source: 'remembered' };
    const ua = req.headers['user-agent'];
    return ua ? { name: ua.slice(0, 80), source: 'user_agent' } : { name: address, source: 'address' };
  }
}
