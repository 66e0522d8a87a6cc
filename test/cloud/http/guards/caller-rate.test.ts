import { describe, expect, it } from 'vitest';
import { callerRate } from '../../../../cloud/http/guards/caller-rate.ts';
import type { SiteRow } from '../../../../cloud/repo/sites-repo.ts';
import { RateLimiter } from '../../../../main/lib/rate-limiter.ts';
import { cloudRequest } from './request.ts';

const withSite = (id: string) => Object.assign(cloudRequest(), { site: { id } as SiteRow });

describe('callerRate', () => {
  it("spends the known site's budget, then 429; another site and an unknown caller are not held back", () => {
    const guard = callerRate(new RateLimiter(), 1, () => 1_000_000);
    expect(guard(withSite('site_a'))).toBeNull();
    expect(guard(withSite('site_a'))).toMatchObject({ code: 'rate_limited' });
    expect(guard(withSite('site_b'))).toBeNull();
    expect(guard(cloudRequest())).toBeNull();
  });
  it('an account is counted by its id', () => {
    const guard = callerRate(new RateLimiter(), 1, () => 1_000_000);
    const acc = () => Object.assign(cloudRequest(), { account: { account: { id: 'acc_1' } } as never });
    expect(guard(acc())).toBeNull();
    expect(guard(acc())).toMatchObject({ code: 'rate_limited' });
  });
});
