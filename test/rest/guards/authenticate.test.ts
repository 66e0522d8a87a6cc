import { describe, expect, it } from 'vitest';
import { PRINCIPALS } from '../../../main/contract/principal.ts';
import { RateLimiter } from '../../../main/lib/rate-limiter.ts';
import type { AdminAuth } from '../../../main/rest/admin-auth.ts';
import { ADMIN_AUTH_FAILURES_PER_MINUTE, authenticate } from '../../../main/rest/guards/authenticate.ts';
import { adminRequest } from './request.ts';

const deps = (known: boolean) => ({
  auth: { principal: () => (known ? PRINCIPALS.cliViaService : null) } as unknown as AdminAuth,
  failures: new RateLimiter(),
  now: () => 1_000_000,
  trustProxy: () => false,
});

describe('authenticate', () => {
  it("names the caller's principal", () => {
    const c = adminRequest();
    expect(authenticate(deps(true))(c)).toBeNull();
    expect(c.who).toBe(PRINCIPALS.cliViaService);
  });
  it('answers 401 with WWW-Authenticate, then 429 once the address has spent its failures; another address is not held back', () => {
    const guard = authenticate(deps(false));
    for (let i = 0; i < ADMIN_AUTH_FAILURES_PER_MINUTE; i++)
      expect(guard(adminRequest())).toMatchObject({
        code: 'unauthorized',
        headers: { 'WWW-Authenticate': expect.stringContaining('Bearer') },
      });
    expect(guard(adminRequest())).toMatchObject({
      code: 'rate_limited',
      headers: { 'Retry-After': expect.any(String) },
    });
    expect(guard(adminRequest({}, 'GET', '127.0.0.2'))).toMatchObject({ code: 'unauthorized' });
  });
});
