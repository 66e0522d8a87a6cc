import { generateKeyPairSync } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PLAN_FEATURES } from '../../main/contract/cloud/catalog.ts';
import { gatewaySuite, DAY, HOUR, type TestClient } from './helpers/world.ts';

/**
 * The feature gates' source once connected: the verified certificate, turned
 * on and off by what the vendor does (plan changed, product switched off,
 * license revoked or expired), by time (stale, expired with the clock moved,
 * clock set back) and refused when it is not signed by the pinned key.
 */
const suite = gatewaySuite();
const pool = suite.pool;

/** A client connected to the gateway with an active license of `plan`. */
const licensed = (plan = 'pro') => pool.connected(suite.gw.url, () => suite.gw.license(plan));

const allowed = async (t: TestClient, feature: string) => (await t.client.entitlements.check(feature)).allowed;

describe('what the vendor changes reaches the gates at the next sync', () => {
  it('plan changed: a feature taken out of the plan is refused, put back it is allowed', async () => {
    const { t, c } = await licensed('pro');
    expect(await allowed(t, 'aeo.reports')).toBe(true);
    const features = [...DEFAULT_PLAN_FEATURES.free, ...DEFAULT_PLAN_FEATURES.pro];
    await suite.gw.op('plans.set', { id: 'pro', features: features.filter((f) => f !== 'aeo.reports') });
    try {
      expect(await allowed(t, 'aeo.reports')).toBe(true); // the gates answer from the certificate they hold
      await c.sync();
      expect(await c.entitlements.decide('aeo.reports')).toMatchObject({
        source: 'certificate',
        code: 'entitlement_required',
        entitlement: { allowed: false },
      });
      expect(await allowed(t, 'verto.translate')).toBe(true);
    } finally {
      await suite.gw.op('plans.set', { id: 'pro', features });
    }
    await c.sync();
    expect(await allowed(t, 'aeo.reports')).toBe(true);
  });

  it('product switched off for the site: product_inactive; switched on again: allowed', async () => {
    const { t, c, siteId } = await licensed('pro');
    await suite.gw.op('products.disable', { product: 'verto', site: siteId });
    await c.sync();
    expect(await c.entitlements.decide('verto.translate')).toMatchObject({
      source: 'certificate',
      code: 'product_inactive',
      entitlement: { allowed: false, plan: 'pro' },
    });
    expect(c.status().health.products.verto).toBe('inactive');
    expect(await allowed(t, 'seo.analyze')).toBe(true);
    await suite.gw.op('products.enable', { product: 'verto', site: siteId });
    await c.sync();
    expect(await allowed(t, 'verto.translate')).toBe(true);
  });

  it('license revoked: the signed certificate says so and the site is back on the free policy at once', async () => {
    const { t, c, license } = await licensed('pro');
    expect(await allowed(t, 'verto.translate')).toBe(true);
    await suite.gw.op('licenses.revoke', { id: license.id });
    await c.sync();
    expect(await c.entitlements.decide('verto.translate')).toMatchObject({
      source: 'local',
      code: 'license_invalid',
      entitlement: { allowed: false },
    });
    expect(await allowed(t, 'mcp.core')).toBe(true);
    expect(c.status().health.gateway.license).toBe('invalid');
  });

  it('license expired: license_expired, free features stay', async () => {
    const { t, c, license } = await licensed('pro');
    await suite.gw.op('licenses.extend', { id: license.id, expires: new Date(Date.now() - HOUR).toISOString() });
    await c.sync();
    expect(await c.entitlements.decide('verto.translate')).toMatchObject({
      code: 'license_expired',
      entitlement: { allowed: false },
    });
    expect(await allowed(t, 'site.pages.write')).toBe(true);
    expect(c.status().health.gateway.license).toBe('expired');
  });
});

describe('time', () => {
  it('warns after 72 h without a refresh, stops granting after 7 days, and a sync (clock re-synced) brings it back', async () => {
    const { t, c } = await licensed('pro');
    try {
      // 73 hours pass, on both sides
      t.clock.skewMs = suite.gw.clock.skewMs = 73 * HOUR;
      expect(await allowed(t, 'verto.translate')).toBe(true);
      expect(c.status().certificate!.reason).toBe('stale');
      expect(c.status().warnings.map((w) => w.code)).toContain('cloud_certificate_stale');
      expect(c.status().health.gateway.entitlements).toBe('stale');

      // then the local clock runs four days ahead of the gateway's
      t.clock.skewMs = 7 * DAY + HOUR;
      expect(await c.entitlements.decide('verto.translate')).toMatchObject({
        source: 'local',
        entitlement: { allowed: false },
      });
      expect(c.status().certificate).toMatchObject({ usable: false, reason: 'expired' });
      expect(c.status().health.gateway.entitlements).toBe('expired');
      expect(await allowed(t, 'mcp.core')).toBe(true);

      // The signature is out of the gateway's window: the client re-syncs once and signs again; the fresh certificate's signed time sets the clock.
      const r = await c.sync();
      expect(r.certificate).toBe('accepted');
      expect(c.status().clock.offset_ms).toBeLessThan(-3 * DAY);
      expect(await allowed(t, 'verto.translate')).toBe(true);
      expect(c.status().last_errors[0]).toBeUndefined();
    } finally {
      suite.gw.clock.skewMs = 0;
    }
  });

  it('the certificate expires with the gateway unreachable and both clocks moved', async () => {
    const { t, c } = await licensed('pro');
    const cert = c.status().certificate!;
    expect(Date.parse(cert.grants_until) - Date.parse(cert.issued_at)).toBe(7 * DAY);
    t.clock.skewMs = Date.parse(cert.cert_expires_at) - Date.now() + 1000;
    expect(await allowed(t, 'verto.translate')).toBe(false);
    expect(c.status().certificate!.reason).toBe('expired');
  });

  it('a clock set back is detected: nothing is granted from the certificate until a sync re-syncs the clock', async () => {
    const { t, c } = await licensed('pro');
    expect(await allowed(t, 'verto.translate')).toBe(true);
    t.clock.skewMs = -2 * DAY;
    expect(await c.entitlements.decide('verto.translate')).toMatchObject({
      source: 'local',
      entitlement: { allowed: false },
    });
    expect(c.status().clock.set_back).toBe(true);
    expect(c.status().warnings.map((w) => w.code)).toContain('cloud_clock_set_back');
    // and across a restart
    await t.reopen();
    expect(await allowed(t, 'verto.translate')).toBe(false);
    await t.client.sync();
    expect(await allowed(t, 'verto.translate')).toBe(true);
    expect(t.client.status().clock.set_back).toBe(false);
  });

  it('a clock set back later than the certificate is caught by the high-water mark', async () => {
    const { t, c } = await licensed('pro');
    t.clock.skewMs = 3 * DAY; // time passes (offset still 0: no request made)
    expect(await allowed(t, 'verto.translate')).toBe(true);
    t.clock.skewMs = 1 * DAY; // set back two days: still after issued_at
    expect(await allowed(t, 'verto.translate')).toBe(false);
    expect(c.status().certificate!.reason).toBe('clock_set_back');
  });
});

describe('certificate pinning', () => {
  it('after the gateway rotates its key, new certificates are refused and the old one keeps its own expiry', async () => {
    const { t, c } = await licensed('pro');
    const pinned = c.status().pinned_key!;
    await suite.gw.op('keys.rotate');
    try {
      const r = await c.sync();
      expect(r.certificate).toBe('refused');
      const s = c.status();
      expect(s.warnings.map((w) => w.code)).toContain('cloud_certificate_refused');
      expect(s.last_errors[0]).toMatchObject({ operation: 'certificate', code: 'signature_invalid' });
      expect(s.certificate!.kid).toBe(pinned.kid);
      expect(await allowed(t, 'verto.translate')).toBe(true);
      t.clock.skewMs = 7 * DAY + HOUR;
      expect(await allowed(t, 'verto.translate')).toBe(false);
    } finally {
      t.clock.skewMs = 0;
    }
  });

  it('a gateway whose key is not the one given at connect is refused: no grant from it', async () => {
    const foreign = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!;
    const t = await pool.fresh();
    const r = await t.client.connect({ url: suite.gw.url, publicKey: foreign });
    expect(r.pinned_key).toMatchObject({ source: 'explicit', kid: null });
    expect(r.first_sync).toMatchObject({ ok: false, code: 'signature_invalid' });
    const lic = await suite.gw.license('pro');
    await expect(t.client.activate(lic.license_key)).rejects.toMatchObject({ code: 'signature_invalid' });
    expect(t.client.status().certificate).toBeNull();
    expect(await allowed(t, 'verto.translate')).toBe(false);
  });

  it('the key given at connect as the operator prints it is used', async () => {
    const keys = await suite.gw.op<Array<{ kid: string; x: string; fingerprint: string; state: string }>>('keys.show');
    const active = keys.find((k) => k.state === 'active')!;
    const t = await pool.fresh();
    const r = await t.client.connect({ url: suite.gw.url, publicKey: `${active.kid}:${active.x}` });
    expect(r.pinned_key).toEqual({ kid: active.kid, fingerprint: active.fingerprint, source: 'explicit' });
    await t.client.activate((await suite.gw.license('pro')).license_key);
    expect(await allowed(t, 'verto.translate')).toBe(true);
  });

  it('a certificate edited in the state file grants nothing after a restart', async () => {
    const { t } = await licensed('pro');
    const file = join(t.dataDir, 'cloud-state.json');
    const doc = JSON.parse(await readFile(file, 'utf8'));
    const payload = JSON.parse(Buffer.from(doc.certificate.payload, 'base64url').toString('utf8'));
    payload.cert_expires_at = '2099-01-01T00:00:00.000Z';
    doc.certificate.payload = Buffer.from(JSON.stringify(payload)).toString('base64url');
    await t.client.close();
    await writeFile(file, JSON.stringify(doc));
    const c = await t.reopen();
    expect(c.status().certificate).toBeNull();
    expect(await allowed(t, 'verto.translate')).toBe(false);
    expect(t.logs()).toMatch(/saved certificate was not used/);
  });
});
