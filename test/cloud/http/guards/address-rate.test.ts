import { describe, expect, it } from 'vitest';
import { addressRate } from '../../../../cloud/http/guards/address-rate.ts';
import { cloudRequest } from './request.ts';

describe('addressRate', () => {
  it('spends the address budget with RateLimit headers, then 429; another address has its own', () => {
    const guard = addressRate({ perAddress: 2, register: 0 }, false, () => 1_000_000);
    const first = cloudRequest({ entry: {} });
    expect(guard(first)).toBeNull();
    expect(first.answerHeaders['ratelimit-limit']).toBe('2');
    expect(guard(cloudRequest({ entry: {} }))).toBeNull();
    expect(guard(cloudRequest({ entry: {} }))).toMatchObject({ code: 'rate_limited' });
    expect(guard(cloudRequest({ entry: {}, remoteAddress: '127.0.0.2' }))).toBeNull();
  });
  it('sites/register has a tighter budget of its own; X-Forwarded-For counts only when the proxy is trusted', () => {
    const guard = addressRate({ perAddress: 100, register: 1 }, false, () => 1_000_000);
    const reg = (xff: string) => cloudRequest({ entry: { name: 'register' }, headers: { 'x-forwarded-for': xff } });
    expect(guard(reg('203.0.113.1'))).toBeNull();
    expect(guard(reg('203.0.113.2'))).toMatchObject({ code: 'rate_limited' });
    const trusting = addressRate({ perAddress: 100, register: 1 }, true, () => 1_000_000);
    expect(trusting(reg('203.0.113.1'))).toBeNull();
    expect(trusting(reg('203.0.113.2'))).toBeNull();
  });
});
