import type { Guard } from '../../../main/lib/http/compose.ts';
import { checkRate } from '../../../main/lib/http/rate-limit.ts';
import type { RateLimiter } from '../../../main/lib/rate-limiter.ts';
import type { CloudRequest } from '../cloud-request.ts';

/** A known caller (site or account) spends its own budget, shared with the download tokens of the same site. */
export function callerRate(bySite: RateLimiter, perSite: number, now: () => number): Guard<CloudRequest> {
  return (c) => {
    const caller = c.site?.id ?? c.account?.account.id;
    return caller ? checkRate(c.res, bySite, caller, perSite, now()) : null;
  };
}
