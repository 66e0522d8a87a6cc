import type { IncomingMessage, ServerResponse } from 'node:http';
import { isJsonContentType } from '@modelcontextprotocol/server';
import type { Settings } from '../contract/settings.ts';
import type { Tokens, Verified } from '../core/identity/tokens.ts';
import type { RateLimiter } from '../lib/rate-limiter.ts';
import { HttpError } from '../lib/http/http-error.ts';
import { ANSWERED, type Guard } from '../lib/http/compose.ts';
import { checkHost } from '../lib/http/host.ts';
import { answerPreflight, checkOrigin, corsHeaders, type CorsPolicy } from '../lib/http/cors.ts';
import { checkRate, rateLimitedError } from '../lib/http/rate-limit.ts';
import { readBody, type BodyBudget } from '../lib/http/body.ts';
import { parseJson } from '../lib/http/json.ts';
import { requestId } from '../lib/http/request-id.ts';
import { clientAddress } from '../lib/http/client-address.ts';
import { authenticate } from './bearer-auth.ts';
import { wantsEventStream } from './event-stream.ts';
import { checkRpc, check2025Headers, type CheckedRpc } from './rpc-check.ts';

/** What the guards learn about one request, in the order they learn it. */
export interface McpRequest {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  settings: Settings;
  now: number;
  address: string;
  /** a GET asking for the notification stream */
  stream: boolean;
  /** the JSON-RPC id of the request, echoed in a refusal once the body is read */
  rpcId: string | number | null;
  auth?: Verified;
  rpc?: CheckedRpc;
}

/** A request's facts before any guard ran: its id (sent back as X-Request-Id), the settings now, the caller's address. */
export function mcpRequestOf(req: IncomingMessage, res: ServerResponse, settings: Settings, now: number): McpRequest {
  return {
    req,
    res,
    requestId: requestId(req, res, now),
    settings,
    now,
    address: clientAddress(req, settings.trust_proxy_headers),
    stream: false,
    rpcId: null,
  };
}

const ALLOW_HEADERS =
  'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID, X-Request-Id';
const EXPOSE_HEADERS =
  'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, X-Request-Id';
export const METHODS = 'GET, POST, OPTIONS';
const corsPolicy = (s: Settings): CorsPolicy => ({
  origins: s.cors,
  methods: METHODS,
  allowHeaders: ALLOW_HEADERS,
  exposeHeaders: EXPOSE_HEADERS,
});

/** DNS rebinding: the Host must be one we serve; a browser's Origin must be allowed by `cors`. */
export const hostGuard =
  (allowedHosts: ReadonlySet<string>): Guard<McpRequest> =>
  (c) =>
    checkHost(c.req, allowedHosts) ?? checkOrigin(c.req, c.settings.cors, allowedHosts);

/** CORS headers on every answer; a preflight is answered here. */
export const corsGuard: Guard<McpRequest> = (c) => {
  for (const [k, v] of Object.entries(corsHeaders(c.req, corsPolicy(c.settings)))) c.res.setHeader(k, v);
  if (c.req.method === 'OPTIONS') return answerPreflight(c.req, c.res, corsPolicy(c.settings)) ?? ANSWERED;
};

/** POST a message, or GET the event stream; anything else is a 405. */
export const methodGuard: Guard<McpRequest> = (c) => {
  c.stream = c.req.method === 'GET' && wantsEventStream(c.req);
  if (c.req.method !== 'POST' && !c.stream) {
    return new HttpError(
      'invalid_request',
      `${c.req.method} is not supported on the MCP endpoint: POST a JSON-RPC message, or GET with Accept: text/event-stream for change notifications`,
      { status: 405, headers: { Allow: METHODS } },
    );
  }
};

/** The gateway switched off in settings answers 503 to everyone. */
export const enabledGuard: Guard<McpRequest> = (c) => {
  if (!c.settings.enabled)
    return new HttpError(
      'gateway_disabled',
      'the gateway is switched off in Gatehouse settings: switch it on in the console, the tray or with `gatehouse settings set enabled true`',
    );
};

/**
 * The bearer token. A failed authentication spends the address's budget, so
 * guessing tokens is rate limited; a valid token is never held back by
 * someone else's failures (every local client shares 127.0.0.1).
 */
export const authGuard =
  (tokens: Tokens, limiter: RateLimiter): Guard<McpRequest> =>
  (c) => {
    const verified = authenticate(c.req, tokens);
    if (!(verified instanceof HttpError)) {
      c.auth = verified;
      return;
    }
    const d = limiter.check(`addr:${c.address}`, c.settings.rate_limit, c.now);
    return d.allowed ? verified : rateLimitedError(d, RAISE_RATE_LIMIT);
  };

/** What every rate refusal of the endpoint says: the setting that raises the limit, and how (docs/mcp.md). */
const RAISE_RATE_LIMIT = 'the rate_limit setting raises it: gatehouse settings set rate_limit N, 0 turns it off';

/** The token's own budget, before the body: a token over it costs us no read, no parse. */
export const tokenRateGuard =
  (limiter: RateLimiter): Guard<McpRequest> =>
  (c) =>
    checkRate(c.res, limiter, `tok:${c.auth!.record.id}`, c.settings.rate_limit, c.now, RAISE_RATE_LIMIT);

/**
 * The body of a POST: JSON by Content-Type, within the size limit (and the
 * memory all bodies share), nesting-limited, one JSON-RPC message that passes
 * the protocol checks of its era (rpc-check.ts). The request's id is kept as
 * soon as it is read, so a refusal answers with it.
 */
export const bodyGuard =
  (limit: number, budget?: BodyBudget): Guard<McpRequest> =>
  async (c) => {
    if (c.stream) return;
    if (!isJsonContentType(c.req.headers['content-type'] ?? null)) {
      return new HttpError('invalid_request', 'Content-Type must be application/json', {
        status: 415,
        headers: { Connection: 'close' },
      });
    }
    const parsed = parseJson(await readBody(c.req, { limit, ...(budget ? { budget } : {}) }));
    const id = (parsed as { id?: unknown } | null)?.id;
    if (typeof id === 'number' || typeof id === 'string') c.rpcId = id;
    c.rpc = checkRpc(c.req, parsed);
    if (c.rpc.era === '2025') check2025Headers(c.req, c.rpc);
  };
