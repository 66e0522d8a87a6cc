import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckAnswer, CloudErrorEnvelope } from '../../main/contract/cloud/index.ts';
import { rawRequest, register, type SiteClient } from './helpers/client.ts';
import { verifyCertificate } from './helpers/certificate.ts';
import { startHarness, type Harness } from './helpers/cloud-harness.ts';

let h: Harness;
let free: SiteClient;
let pro: SiteClient;
let proAccount: string;

beforeAll(async () => {
  h = await startHarness();
  free = await register(h.gateway);
  pro = await register(h.gateway);
  const f = await h.op<{ license_key: string }>('licenses.create', { plan: 'free' });
  const p = await h.op<{ license_key: string; account_id: string }>('licenses.create', {
    plan: 'pro',
    expires: '2099-12-31',
  });
  proAccount = p.account_id;
  await free.post('license/activate', { license_key: f.license_key });
  await pro.post('license/activate', { license_key: p.license_key });
}, 180_000);
afterAll(() => h?.stop());

describe('entitlements/check (the shapes the host platform expects)', () => {
  it('answers {success: true, entitlement: {feature, allowed, plan, expires_at}}', async () => {
    const r = await pro.post('entitlements/check', { feature: 'verto.translate' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: true,
      entitlement: { feature: 'verto.translate', allowed: true, plan: 'pro', expires_at: '2099-12-31T00:00:00.000Z' },
    });
    CheckAnswer.parse(r.body);
  });

  it('answers entitlement_required with required_plan for a feature outside the plan', async () => {
    const r = await free.post('entitlements/check', { feature: 'verto.translate' });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ code: 'entitlement_required', required_plan: 'pro', retryable: false });
    expect(r.body.error.message).toMatch(/upgrade to pro/);
    CloudErrorEnvelope.parse(r.body);
    const agency = await pro.post('entitlements/check', { feature: 'agency.sites' });
    expect(agency.body.error).toMatchObject({ code: 'entitlement_required', required_plan: 'agency' });
  });

  it('answers product_inactive when the product is switched off for the site or its account', async () => {
    await h.op('products.disable', { product: 'verto', site: pro.creds.site_id });
    const r = await pro.post('entitlements/check', { feature: 'verto.translate' });
    expect([r.status, r.body.error.code, r.body.error.product]).toEqual([403, 'product_inactive', 'verto']);
    await h.op('products.enable', { product: 'verto', site: pro.creds.site_id });
    expect((await pro.post('entitlements/check', { feature: 'verto.translate' })).status).toBe(200);
    await h.op('products.disable', { product: 'mcp', account: proAccount });
    expect((await pro.post('entitlements/check', { feature: 'mcp.core' })).body.error.code).toBe('product_inactive');
    const products = await pro.get('products');
    expect(products.body.states).toMatchObject({ mcp: 'inactive', verto: 'active' });
    await h.op('products.enable', { product: 'mcp', account: proAccount });
    expect((await pro.get('products')).body.states.mcp).toBe('active');
  });

  it('answers license_invalid without a license, license_expired after expiry', async () => {
    const none = await (await register(h.gateway)).post('entitlements/check', { feature: 'mcp.core' });
    expect([none.status, none.body.error.code]).toEqual([403, 'license_invalid']);
    const s = await register(h.gateway);
    const l = await h.op<{ id: string; license_key: string }>('licenses.create', { plan: 'pro' });
    await s.post('license/activate', { license_key: l.license_key });
    await h.op('licenses.extend', { id: l.id, expires: '2020-02-02' });
    const exp = await s.post('entitlements/check', { feature: 'mcp.core' });
    expect([exp.status, exp.body.error.code]).toEqual([403, 'license_expired']);
  });

  it('refuses an unknown or malformed feature with a clear 400', async () => {
    expect((await pro.post('entitlements/check', { feature: 'no.such' })).body.error).toMatchObject({
      code: 'invalid_request',
    });
    expect((await pro.post('entitlements/check', { feature: '__proto__' })).status).toBe(400);
    expect((await pro.post('entitlements/check', { feature: 'x'.repeat(10_000) })).status).toBe(400);
    expect((await pro.post('entitlements/check', { feature: 'mcp.core', extra: 1 })).status).toBe(400);
  });

  it('follows a plan change at once', async () => {
    await h.op('plans.set', { id: 'free', features: ['mcp.core', 'verto.translate'] });
    expect((await free.post('entitlements/check', { feature: 'verto.translate' })).status).toBe(403); // verto is not among free's products
    await h.op('plans.set', { id: 'free', products: ['mcp', 'aeo', 'verto'] });
    expect((await free.post('entitlements/check', { feature: 'verto.translate' })).status).toBe(200);
  });
});

describe('entitlements, products, features', () => {
  it("GET entitlements lists all of the site's, with a certificate holding the same list", async () => {
    const r = await pro.get('entitlements');
    const jwks = (await rawRequest(`${h.gateway}/keys`, 'GET', {})).body;
    const payload = verifyCertificate(r.body.certificate, jwks);
    expect(payload.entitlements).toEqual(r.body.entitlements);
    expect(r.body.entitlements.length).toBeGreaterThan(10);
  });

  it("GET features names each feature's product and required plan", async () => {
    const r = await pro.get('features');
    expect(r.body.plan).toBe('pro');
    expect(r.body.features).toContainEqual({
      key: 'agency.sites',
      product: 'pro',
      title: 'Agency multi-site views',
      required_plan: 'agency',
    });
  });

  it('refuses unknown query parameters', async () => {
    expect((await pro.get('features', { query: 'x=1' })).status).toBe(400);
  });
});
