import { describe, expect, it } from 'vitest';
import { mayReadMetrics, metricsAccess } from '../../../../cloud/http/guards/metrics-access.ts';
import { cloudRequest } from './request.ts';

const metricsReq = (o: { headers?: Record<string, string>; remoteAddress?: string } = {}) =>
  cloudRequest({ url: '/metrics', entry: { name: 'metrics' }, ...o });

describe('metricsAccess', () => {
  it('without a token: loopback peers without a forwarding header only', () => {
    for (const remoteAddress of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1'])
      expect(mayReadMetrics(metricsReq({ remoteAddress }).req, undefined), remoteAddress).toBe(true);
    for (const remoteAddress of ['10.0.0.1', '::ffff:10.0.0.1', '2001:db8::1', ''])
      expect(mayReadMetrics(metricsReq({ remoteAddress }).req, undefined), remoteAddress).toBe(false);
    expect(mayReadMetrics(metricsReq({ headers: { 'x-forwarded-for': '127.0.0.1' } }).req, undefined)).toBe(false);
    expect(mayReadMetrics(metricsReq({ headers: { forwarded: 'for=127.0.0.1' } }).req, undefined)).toBe(false);
    // nginx's common proxy_set_header X-Real-IP (without X-Forwarded-For), a proxy's Via; behind a trusted proxy, never.
    expect(mayReadMetrics(metricsReq({ headers: { 'x-real-ip': '203.0.113.7' } }).req, undefined)).toBe(false);
    expect(mayReadMetrics(metricsReq({ headers: { via: '1.1 proxy' } }).req, undefined)).toBe(false);
    expect(mayReadMetrics(metricsReq({ remoteAddress: '127.0.0.1' }).req, undefined, true)).toBe(false);
    expect(metricsAccess(undefined, true)(metricsReq({ remoteAddress: '127.0.0.1' }))).toMatchObject({
      code: 'not_found',
    });
  });
  it('with a token: the Bearer token and nothing else, from anywhere', () => {
    expect(
      mayReadMetrics(
        metricsReq({ remoteAddress: '10.0.0.1', headers: { authorization: 'Bearer t0ken' } }).req,
        't0ken',
      ),
    ).toBe(true);
    expect(mayReadMetrics(metricsReq({ headers: {} }).req, 't0ken')).toBe(false);
    expect(mayReadMetrics(metricsReq({ headers: { authorization: 'Bearer t0ke' } }).req, 't0ken')).toBe(false);
  });
  it('refuses as a path that does not exist, and leaves other routes alone', () => {
    const guard = metricsAccess(undefined);
    expect(guard(metricsReq({ remoteAddress: '10.0.0.1' }))).toMatchObject({ code: 'not_found', status: 404 });
    expect(guard(cloudRequest({ entry: { name: 'usageRecord' }, remoteAddress: '10.0.0.1' }))).toBeNull();
  });
});
