import { describe, expect, it } from 'vitest';
import { LocalEntitlements } from '../../../main/core/policy/local-entitlements.ts';

describe('local entitlements', () => {
  it('allows the free plan its features and names the plan of the others', async () => {
    const free = new LocalEntitlements('free');
    expect(await free.check('site.pages.read')).toMatchObject({ allowed: true, plan: 'free' });
    expect(await free.check('verto.translate')).toMatchObject({ allowed: false, plan: 'pro' });
  });

  it('a feature key that is a member of every object is an unknown feature, not a free one', async () => {
    const free = new LocalEntitlements('free');
    for (const feature of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      expect(await free.check(feature), feature).toMatchObject({ allowed: false, plan: 'pro' });
    }
  });
});
