import type { Guard } from '../../lib/http/compose.ts';
import { HttpError } from '../../lib/http/http-error.ts';
import { clientAddress } from '../../lib/http/client-address.ts';
import { rateHeaders } from '../../lib/http/rate-limit.ts';
import type { RateLimiter } from '../../lib/rate-limiter.ts';
import type { AdminAuth } from '../admin-auth.ts';
import type { AdminRequest } from './admin-request.ts';

/**
 * Failed authentications allowed per client address and minute on the admin
 * API and the local REST. Fixed, not the `rate_limit` setting: that one is for
 * MCP clients and may be 0 (off). A valid credential is never held back.
 */
export const ADMIN_AUTH_FAILURES_PER_MINUTE = 30;

export interface AuthenticateDeps {
  auth: AdminAuth;
  failures: RateLimiter;
  now: () => number;
  trustProxy: () => boolean;
}

/**
 * The caller's principal: a console session, the admin key or a client token
 * (what each may do is the core's decision, per action). A failed attempt
 * spends the client address's budget: 429 once it is gone, 401 before.
 */
export function authenticate(deps: AuthenticateDeps): Guard<AdminRequest> {
  return (c) => {
    c.who = deps.auth.principal(c.req);
    if (c.who) return null;
    const d = deps.failures.check(
      `admin-fail:${clientAddress(c.req, deps.trustProxy())}`,
      ADMIN_AUTH_FAILURES_PER_MINUTE,
      deps.now(),
    );
    if (!d.allowed)
      return new HttpError(
        'rate_limited',
        `too many failed authentications from this address; retry after ${d.retry_after} s`,
        { headers: rateHeaders(d) },
      );
    return new HttpError(
      'unauthorized',
      'log in through the console link printed by `gatehouse serve`, or send the admin key as a Bearer token',
      { headers: { 'WWW-Authenticate': 'Bearer realm="gatehouse-admin"' } },
    );
  };
}
