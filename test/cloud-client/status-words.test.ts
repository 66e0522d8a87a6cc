import { describe, expect, it } from 'vitest';
import { cloudActions } from '../../main/cloud-client/cloud-actions-port.ts';
import type { CloudClient } from '../../main/cloud-client/index.ts';
import { gatewaySuite, toolCall } from './helpers/world.ts';

/**
 * What `cloud status`, the Cloud screen and the tray say, against the real gateway: a disconnect or a new gateway starts clean
 * (the old site kept as history), one quota alert per counter, a deactivated
 * license is the free plan (not "invalid"), and an mcp_actions limit the
 * gateway enforces on uploads shows as an alert.
 */
const suite = gatewaySuite({ proxy: true });
const pool = suite.pool;

const port = (c: CloudClient) =>
  cloudActions({
    client: c,
    clock: { now: () => Date.now() },
    stats: () => ({ since: new Date().toISOString(), usage: [] }) as never,
    changed: () => {},
  });

describe('a disconnect, or another gateway, starts clean', () => {
  it('no last error, outbox count or request log of the old site; the old site readable as history, also after a restart', async () => {
    const { t, c, siteId } = await pool.connected(suite.proxy.url, () => suite.gw.license('pro'), {
      sleep: async () => {},
    });
    for (let i = 0; i < 3; i++) c.usage.record(toolCall());
    await c.usage.flush();
    suite.proxy.script({
      kind: 'status',
      status: 400,
      body: { success: false, error: { code: 'invalid_value', message: 'no', request_id: 'x', retryable: false } },
    });
    await expect(c.api!.siteStatus()).rejects.toMatchObject({ info: { httpStatus: 400 } });
    expect(c.status().last_errors).toHaveLength(1);
    expect(c.status().outbox.delivered).toBe(3);

    await c.disconnect();
    const off = c.status();
    expect(off.last_errors).toEqual([]);
    expect(off.outbox).toMatchObject({
      depth: 0,
      delivered: 0,
      accepted: 0,
      rejected: 0,
      abandoned: 0,
      recent_rejections: [],
      last_upload_at: null,
    });
    expect(off.previous_site).toMatchObject({
      site_id: siteId,
      gateway_url: suite.proxy.url,
      delivered: 3,
      abandoned: 0,
    });

    const again = await c.connect({ url: suite.gw.url });
    expect(again.site_id).not.toBe(siteId);
    expect(c.status()).toMatchObject({ last_errors: [], outbox: { delivered: 0 } });
    const c2 = await t.reopen();
    expect(c2.status()).toMatchObject({
      last_errors: [],
      outbox: { delivered: 0, depth: 0 },
      previous_site: { site_id: siteId },
    });
  });
});

describe('quota alerts', () => {
  it('an mcp_actions limit reached at upload shows in status (one alert per counter: used up wins over nearly used up)', async () => {
    const { c, siteId } = await pool.connected(suite.gw.url, () => suite.gw.license('pro'));
    await suite.gw.op('limits.set', { scope: 'site', subject: siteId, metric: 'mcp_actions', period: 'day', limit: 5 });
    const p = port(c);
    for (let i = 0; i < 4; i++) c.usage.record(toolCall());
    await c.usage.flush();
    await p['cloud.usage']({ period: 'day', days: 1 });
    expect(p.status().quota_alerts).toMatchObject([{ level: 'near', metric: 'mcp_actions', scope: 'site' }]);
    for (let i = 0; i < 3; i++) c.usage.record(toolCall());
    await c.usage.flush();
    // the figures fetched before still say "near"; the gateway's refusal of events says "used up": one alert, the worse
    const alerts = p.status().quota_alerts;
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({
      level: 'exceeded',
      metric: 'mcp_actions',
      scope: 'site',
      subject: siteId,
      period: 'day',
      limit: 5,
      source: 'refusal',
    });
    await p['cloud.usage']({ period: 'day', days: 1 });
    expect(p.status().quota_alerts).toMatchObject([{ level: 'exceeded', metric: 'mcp_actions' }]);
  });
});

describe('a deactivated license', () => {
  it('is "deactivated: the free plan applies": not invalid, not revoked, the free plan\'s products', async () => {
    const { c } = await pool.connected(suite.gw.url, () => suite.gw.license('pro'));
    expect(c.status().license_state).toBe('active');
    await c.deactivate();
    const s = c.status();
    expect(s.license_state).toBe('deactivated');
    expect(s.health.gateway.license).toBe('deactivated');
    expect(s.products).toMatchObject({ mcp: 'active', verto: 'inactive' });
    expect(s.warnings.map((w) => w.code)).not.toContain('cloud_license_inactive');
    expect(await c.entitlements.decide('verto.translate')).toMatchObject({
      code: 'entitlement_required',
      entitlement: { allowed: false },
    });
    await c.activate((await suite.gw.license('pro')).license_key);
    expect(c.status().license_state).toBe('active');
  });

  it('a license revoked by its vendor still says invalid', async () => {
    const { c, license } = await pool.connected(suite.gw.url, () => suite.gw.license('pro'));
    await suite.gw.op('licenses.revoke', { id: license.id });
    await c.sync();
    expect(c.status().license_state).toBe('invalid');
    expect(await c.entitlements.decide('verto.translate')).toMatchObject({ code: 'license_invalid' });
  });
});
