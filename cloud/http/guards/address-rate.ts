import type { Guard } from '../../../main/lib/http/compose.ts';
import { addressBucket, clientAddress } from '../../../main/lib/http/client-address.ts';
import { checkRate } from '../../../main/lib/http/rate-limit.ts';
import { RateLimiter } from '../../../main/lib/rate-limiter.ts';
import type { CloudRequest } from '../cloud-request.ts';

/** Every request spends its client address's budget; sites/register also a budget of its own (unsigned, it creates rows). */
export function addressRate(
  limits: { perAddress: number; register: number },
  trustProxy: boolean,
  now: () => number,
): Guard<CloudRequest> {
  const byAddress = new RateLimiter();
  const byRegister = new RateLimiter();
  return (c) => {
    const address = addressBucket(clientAddress(c.req, trustProxy));
    const t = now();
    return (
      checkRate(c.res, byAddress, address, limits.perAddress, t) ??
      (c.entry?.name === 'register' ? checkRate(c.res, byRegister, address, limits.register, t) : null)
    );
  };
}
