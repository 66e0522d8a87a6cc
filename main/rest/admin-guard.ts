import type { IncomingMessage } from 'node:http';
import type { Principal } from '../contract/principal.ts';
import type { RateLimiter } from '../lib/rate-limiter.ts';
import type { AdminAuth } from './admin-auth.ts';
import { CSRF_HEADER } from '../contract/api.ts';
import { HttpError } from '../lib/http/http-error.ts';
import { clientAddress } from '../lib/http/client-address.ts';
import { rateHeaders } from '../lib/http/rate-limit.ts';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/**
 * Failed authentications allowed per client address and minute on the admin
 * API and the local REST. Fixed, not the `rate_limit` setting: that one is for
 * MCP clients and may be 0 (off). A valid credential is never held back.
 */
export const ADMIN_AUTH_FAILURES_PER_MINUTE = 30;

export interface AdmitDeps {
  auth: AdminAuth;
  /** the service's own origin, e.g. http://127.0.0.1:7823 */
  origin: () => string;
  failures: RateLimiter;
  now: () => number;
  trustProxy: () => boolean;
}

/**
 * The one gate in front of the admin API and the local pro REST: a browser
 * request must come from the console's own origin (Origin and Fetch
 * Metadata, so a page on another local port is refused); the caller must
 * present a console session, the admin key or a client token (what each may
 * do is the core's decision, per action); a state-changing call made with the
 * session cookie must carry X-Gatehouse-CSRF (which a cross-site form cannot
 * send). Failed authentications spend the client address's budget (429 once
 * gone). Returns the caller's principal, or throws the refusal.
 */
export function admitAdmin(req: IncomingMessage, deps: AdmitDeps): Principal {
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== deps.origin()) throw new HttpError('forbidden', 'the admin API answers only the console\'s own origin');
  // Cookies are not port-scoped: a page on another local port is "same-site" and its requests carry the
  // console's session cookie. Only the console's own pages (same-origin) and non-browser clients get in.
  const site = req.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') throw new HttpError('forbidden', `${site} request refused: the admin API answers only the console's own pages`);
  const who = deps.auth.principal(req);
  if (!who) {
    const d = deps.failures.check(`admin-fail:${clientAddress(req, deps.trustProxy())}`, ADMIN_AUTH_FAILURES_PER_MINUTE, deps.now());
    if (!d.allowed) throw new HttpError('rate_limited', `too many failed authentications from this address; retry after ${d.retry_after} s`, { headers: rateHeaders(d) });
    throw new HttpError('unauthorized', 'log in through the console link printed by `gatehouse serve`, or send the admin key as a Bearer token', { headers: { 'WWW-Authenticate': 'Bearer realm="gatehouse-admin"' } });
  }
  if (who.kind === 'person' && who.via === 'session' && STATE_CHANGING.has(req.method ?? 'GET') && req.headers[CSRF_HEADER.toLowerCase()] !== '1') {
    throw new HttpError('forbidden', `missing ${CSRF_HEADER} header`);
  }
  return who;
}
