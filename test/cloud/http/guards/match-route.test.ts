import { describe, expect, it } from 'vitest';
import { matchRoute } from '../../../../cloud/http/guards/match-route.ts';
import { routeTable } from '../../../../cloud/http/route-table.ts';
import { cloudRequest } from './request.ts';

describe('matchRoute', () => {
  const guard = matchRoute(routeTable(() => false));
  it('finds the route with its template and parameters, and the query', () => {
    const c = cloudRequest({ url: '/gateway/v1/usage/history?limit=5' });
    expect(guard(c)).toBeNull();
    expect([c.entry?.name, c.entry?.template, c.entry?.auth, c.query.get('limit')]).toEqual([
      'usageHistory',
      'usage/history',
      'site',
      '5',
    ]);
    const probe = cloudRequest({ url: '/health/ready' });
    expect(guard(probe)).toBeNull();
    expect(probe.entry?.name).toBe('ready');
  });
  it('answers 404 for an unknown path and 405 with Allow for a known path under another method', () => {
    expect(guard(cloudRequest({ url: '/gateway/v1/nope' }))).toMatchObject({ code: 'not_found', status: 404 });
    expect(guard(cloudRequest({ method: 'DELETE', url: '/gateway/v1/usage/record' }))).toMatchObject({
      status: 405,
      headers: { Allow: 'POST' },
    });
  });
});
