import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CertificatePayload } from '../../main/contract/cloud/index.ts';
import { rawRequest, register, type SiteClient } from './helpers/client.ts';
import { verifyCertificate } from './helpers/certificate.ts';
import { startHarness, type Harness } from './helpers/cloud-harness.ts';

let h: Harness;
const jwks = async () => (await rawRequest(`${h.gateway}/keys`, 'GET', {})).body;
const newLicense = (args: Record<string, unknown>) =>
  h.op<{ id: string; license_key: string; account_id: string }>('licenses.create', args);

/** How far the gateway's clock is moved (an NTP step back, or another instance whose clock is behind). */
let skewMs = 0;

beforeAll(async () => {
  h = await startHarness({ now: () => new Date(Date.now() + skewMs) });
}, 180_000);
afterAll(() => h?.stop());

describe('licenses', () => {
  let site: SiteClient;
  let lic: { id: string; license_key: string };

  it('activates a license and answers a certificate that verifies against the JWKS', async () => {
    site = await register(h.gateway);
    lic = await newLicense({ plan: 'pro', expires: '2099-01-01' });
    const r = await site.post('license/activate', { license_key: lic.license_key });
    expect(r.status).toBe(200);
    expect(r.body.license).toMatchObject({
      status: 'active',
      plan: 'pro',
      license_expires_at: '2099-01-01T00:00:00.000Z',
      sites_used: 1,
      site_limit: 3,
    });
    expect(r.body.license.key_preview).toMatch(/^ghl_…/);
    expect(JSON.stringify(r.body)).not.toContain(lic.license_key);
    const payload = CertificatePayload.parse(verifyCertificate(r.body.certificate, await jwks()));
    expect(payload.site_id).toBe(site.creds.site_id);
    expect(payload.license).toMatchObject({ status: 'active', plan: 'pro', expires_at: '2099-01-01T00:00:00.000Z' });
    expect(payload.products).toEqual({ aeo: 'active', code: 'active', verto: 'active', mcp: 'active', pro: 'active' });
    expect(payload.entitlements.find((e) => e.feature === 'verto.translate')).toEqual({
      feature: 'verto.translate',
      allowed: true,
      plan: 'pro',
      expires_at: '2099-01-01T00:00:00.000Z',
    });
    expect(payload.entitlements.find((e) => e.feature === 'agency.sites')?.allowed).toBe(false);
    const certTtl = Date.parse(payload.cert_expires_at) - Date.parse(payload.issued_at);
    expect(certTtl).toBe(7 * 86_400_000);
    expect(payload.cert_expires_at).toBe(r.body.cert_expires_at);
    expect(payload.update).toEqual({ channel: 'stable', eligible: true });
    expect(payload.limits).toContainEqual({ scope: 'site', metric: 'ai_tokens', period: 'month', limit: 2_000_000 });
  });

  it('activating the same license again is a no-op', async () => {
    const r = await site.post('license/activate', { license_key: lic.license_key });
    expect(r.body.license.sites_used).toBe(1);
  });

  it('refuses an unknown or malformed key', async () => {
    const r = await site.post('license/activate', { license_key: `ghl_${'A'.repeat(32)}` });
    expect([r.status, r.body.error.code]).toEqual([403, 'license_invalid']);
    const m = await site.post('license/activate', { license_key: 'nope' });
    expect([m.status, m.body.error.code]).toEqual([400, 'invalid_request']);
  });

  it('enforces the production site limit; staging sites take no seat; deactivate frees one', async () => {
    const l = await newLicense({ plan: 'pro', sites: 2 });
    const a = await register(h.gateway);
    const b = await register(h.gateway);
    const c = await register(h.gateway);
    const stage = await register(h.gateway, 'staging');
    expect((await a.post('license/activate', { license_key: l.license_key })).status).toBe(200);
    expect((await b.post('license/activate', { license_key: l.license_key })).status).toBe(200);
    const full = await c.post('license/activate', { license_key: l.license_key });
    expect([full.status, full.body.error.code]).toEqual([409, 'site_limit_reached']);
    expect(full.body.error).toMatchObject({ site_limit: 2, sites_used: 2, retryable: false });
    const s = await stage.post('license/activate', { license_key: l.license_key });
    expect(s.status).toBe(200);
    expect(s.body.license.sites_used).toBe(2);
    const d = await b.post('license/deactivate');
    expect(d.body).toMatchObject({ success: true, license: { status: 'invalid' } });
    expect((await c.post('license/activate', { license_key: l.license_key })).status).toBe(200);
    // a disconnected site frees its seat too
    await a.post('sites/disconnect');
    expect((await b.post('license/activate', { license_key: l.license_key })).status).toBe(200);
  });

  it('two sites racing for the last seat: exactly one gets it', async () => {
    const l = await newLicense({ plan: 'pro', sites: 1 });
    const sites = await Promise.all([1, 2, 3, 4].map(() => register(h.gateway)));
    const answers = await Promise.all(sites.map((s) => s.post('license/activate', { license_key: l.license_key })));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    expect(answers.filter((r) => r.body.error?.code === 'site_limit_reached')).toHaveLength(3);
  });

  it('license/status answers active, expired and invalid with a certificate saying the same', async () => {
    const s = await register(h.gateway);
    const none = await s.get('license/status');
    expect([none.status, none.body.license.status]).toEqual([200, 'invalid']);
    expect(verifyCertificate(none.body.certificate, await jwks()).license.status).toBe('invalid');
    const l = await newLicense({ plan: 'pro' });
    await s.post('license/activate', { license_key: l.license_key });
    expect((await s.get('license/status')).body.license.status).toBe('active');
    await h.op('licenses.extend', { id: l.id, expires: '2020-01-01' });
    const exp = await s.get('license/status');
    expect(exp.body.license).toMatchObject({ status: 'expired', license_expires_at: '2020-01-01T00:00:00.000Z' });
    expect(
      verifyCertificate(exp.body.certificate, await jwks()).entitlements.every((e: { allowed: boolean }) => !e.allowed),
    ).toBe(true);
  });

  it('refresh: a fresh certificate while good; license_expired / license_invalid (with a signed refusal) when not', async () => {
    const s = await register(h.gateway);
    const l = await newLicense({ plan: 'pro' });
    await s.post('license/activate', { license_key: l.license_key });
    const ok = await s.post('license/refresh');
    expect(ok.status).toBe(200);
    verifyCertificate(ok.body.certificate, await jwks());
    await h.op('licenses.extend', { id: l.id, expires: '2021-06-01' });
    const expired = await s.post('license/refresh');
    expect([expired.status, expired.body.error.code]).toEqual([403, 'license_expired']);
    expect(verifyCertificate(expired.body.error.certificate, await jwks()).license.status).toBe('expired');
    await h.op('licenses.extend', { id: l.id, expires: null });
    expect((await s.post('license/refresh')).status).toBe(200);
    await h.op('licenses.revoke', { id: l.id });
    const revoked = await s.post('license/refresh');
    expect([revoked.status, revoked.body.error.code]).toEqual([403, 'license_invalid']);
    const again = await (await register(h.gateway)).post('license/activate', { license_key: l.license_key });
    expect([again.status, again.body.error.code]).toEqual([403, 'license_invalid']);
  });

  it("a site's certificates are issued in order even when the gateway's clock steps back (or another instance's is behind)", async () => {
    // The app refuses a certificate older than the one it holds (a replay); one gateway behind another must not look like one.
    const s = await register(h.gateway);
    const l = await newLicense({ plan: 'pro' });
    const first = CertificatePayload.parse(
      verifyCertificate(
        (await s.post('license/activate', { license_key: l.license_key })).body.certificate,
        await jwks(),
      ),
    );
    try {
      skewMs = -10_000;
      const later = CertificatePayload.parse(
        verifyCertificate((await s.get('license/status')).body.certificate, await jwks()),
      );
      expect(Date.parse(later.issued_at)).toBeGreaterThan(Date.parse(first.issued_at));
      expect(Date.parse(later.cert_expires_at) - Date.parse(later.issued_at)).toBe(
        Date.parse(first.cert_expires_at) - Date.parse(first.issued_at),
      );
    } finally {
      skewMs = 0;
    }
  });

  it('refuses activating an expired license', async () => {
    const l = await newLicense({ plan: 'pro', expires: '2020-01-01' });
    const r = await (await register(h.gateway)).post('license/activate', { license_key: l.license_key });
    expect([r.status, r.body.error.code]).toEqual([403, 'license_expired']);
  });

  it('keys rotate: new certificates carry the new kid; the old kid stays published', async () => {
    const before = await jwks();
    const rot = await h.op<{ retired: string; active: string }>('keys.rotate');
    expect(rot.retired).toBe(before.keys[0].kid);
    const after = await jwks();
    expect(after.keys.map((k: { kid: string }) => k.kid).sort()).toEqual([rot.active, rot.retired].sort());
    const s = await register(h.gateway);
    const r = await s.get('license/status');
    expect(r.body.certificate.kid).toBe(rot.active);
    verifyCertificate(r.body.certificate, after);
  });
});
