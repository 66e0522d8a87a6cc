import type { IncomingMessage, ServerResponse } from 'node:http';
import { upstreamMcpPath, type UpstreamLookupAnswer } from '../contract/remote-upstreams.ts';
import type { Tokens } from '../core/identity/tokens.ts';
import type { ProfileSet, Viewer } from '../core/calls/registry.ts';
import { capabilitiesOf } from '../core/identity/users.ts';
import { mayUseUpstream, remoteUrlKey } from '../core/calls/upstream-access.ts';
import type { Settings } from '../contract/settings.ts';
import type { RateLimiter } from '../lib/rate-limiter.ts';
import { HttpError } from '../lib/http/http-error.ts';
import { ANSWERED, compose, type Guard } from '../lib/http/compose.ts';
import { adminEnvelope } from '../lib/http/envelope.ts';
import { readBody, type BodyBudget } from '../lib/http/body.ts';
import { parseJson } from '../lib/http/json.ts';
import { sendError, sendJson } from '../lib/http/send.ts';
import { authGuard, enabledGuard, hostGuard, mcpRequestOf, tokenRateGuard, type McpRequest } from './guards.ts';

/**
 * `POST .../upstreams/lookup {url}` with a client token: which upstreams,
 * of those this token may use, the person configured for that URL. It answers
 * ids and their endpoint paths only: never a header, a token or another
 * upstream's URL, and an upstream the token may not use answers exactly like
 * no upstream at all, so the route cannot be used to map what is configured.
 * The same guards as the MCP endpoint (Host and Origin, gateway switched on,
 * bearer token, the token's rate limit) run first.
 */

export interface LookupDeps {
  tokens: Tokens;
  limiter: RateLimiter;
  allowedHosts: ReadonlySet<string>;
  settings: () => Settings;
  now: () => number;
  /** the HTTP upstreams configured, id and URL (the service's UpstreamManager) */
  remotes: () => ReadonlyArray<{ id: string; url: string }>;
  profileOf: (name: string) => ProfileSet | undefined;
  bodyBudget?: BodyBudget;
}

const MAX_BODY = 8 * 1024;

const postOnly: Guard<McpRequest> = (c) => {
  if (c.req.method !== 'POST')
    return new HttpError('invalid_request', `${c.req.method} is not supported here: POST {"url": "https://..."}`, {
      status: 405,
      headers: { Allow: 'POST' },
    });
};

export function createUpstreamLookup(deps: LookupDeps) {
  const guards = compose<McpRequest>(
    hostGuard(deps.allowedHosts),
    postOnly,
    enabledGuard,
    authGuard(deps.tokens, deps.limiter),
    tokenRateGuard(deps.limiter),
  );

  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const c = mcpRequestOf(req, res, deps.settings(), deps.now());
    const meta = { requestId: c.requestId };
    try {
      const stop = await guards(c);
      if (stop === ANSWERED) return;
      if (stop) return sendError(res, stop, adminEnvelope, meta);
      const url = urlOf(
        parseJson(await readBody(req, { limit: MAX_BODY, ...(deps.bodyBudget ? { budget: deps.bodyBudget } : {}) })),
      );
      const key = remoteUrlKey(url);
      if (key === null) throw new HttpError('invalid_value', 'url must be an http:// or https:// URL');
      const { record, user } = c.auth!;
      const viewer: Viewer = { capabilities: capabilitiesOf(user.role), scope: record.scope };
      const found = deps
        .remotes()
        .filter((r) => remoteUrlKey(r.url) === key && mayUseUpstream(viewer, r.id, deps.profileOf));
      const answer: UpstreamLookupAnswer = {
        upstreams: found.map((r) => ({ id: r.id, mcp_path: upstreamMcpPath(r.id) })),
      };
      sendJson(res, 200, { ok: true, data: answer });
    } catch (e) {
      // A client that went away gets no answer (a read request is destroyed once its body was read: only the answer side counts).
      if (res.destroyed) return;
      sendError(
        res,
        e instanceof HttpError ? e : new HttpError('internal_error', 'internal error: see the service log'),
        adminEnvelope,
        meta,
      );
    }
  };
}

function urlOf(body: unknown): string {
  const url = (body as { url?: unknown } | null)?.url;
  if (typeof url !== 'string' || url.length === 0 || url.length > 2048)
    throw new HttpError(
      'invalid_value',
      'the body is {"url": "..."}: the remote MCP server\'s URL, at most 2048 characters',
    );
  return url;
}
