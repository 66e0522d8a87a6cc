import { afterAll, beforeAll, expect, it } from 'vitest';
import { HealthReport } from '../../main/contract/health.ts';
import { startWireWorld, type WireWorld } from './helpers/wire-world.ts';

/**
 * The health report says what is true, against the real reference gateway:
 * a failed sync of a connected site is a warning, not a disconnection, and
 * the MCP endpoint serving on the free plan is an active `mcp`.
 */
let w: WireWorld;
beforeAll(async () => {
  w = await startWireWorld();
}, 120_000);
afterAll(async () => w?.stop());

const health = async () => HealthReport.parse((await w.admin('GET', 'health')).body.data);

it('connected on the free plan: mcp active while the endpoint serves; one failed sync leaves it connected, with a warning', async () => {
  const c = await w.admin<{ site_id: string }>('POST', 'cloud/connect', { url: w.proxy.url });
  expect(c.status).toBe(200);
  // no license: the free plan, on which the endpoint serves its tools
  const token = (await w.svc.createToken({ label: 'free plan agent' })).token;
  const client = await w.mcp(token);
  try {
    expect((await client.callTool({ name: 'site_identity', arguments: {} })).isError).toBeFalsy();
  } finally {
    await client.close();
  }
  const before = await health();
  expect(before.cloud.gateway.connected).toBe(true);
  expect(before.cloud.products.mcp).toBe('active');

  w.proxy.rule(() => ({ kind: 'status', status: 503, retryAfter: '1' }));
  try {
    await w.admin('POST', 'cloud/sync', {});
  } finally {
    w.proxy.rule(null);
  }
  const after = await health();
  expect(after.cloud.gateway.connected).toBe(true);
  expect(after.warnings.map((x) => x.code)).toEqual(
    expect.arrayContaining([expect.stringMatching(/^cloud_(sync_failed|gateway_unreachable)$/)]),
  );
  const pro = await w.rest<{ gateway: { connected: boolean }; products: { mcp: string } }>('GET', 'pro/cloud/status');
  expect(pro.body).toMatchObject({ gateway: { connected: true }, products: { mcp: 'active' } });
});
