import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudClientError, type CloudClient } from '../../main/cloud-client/index.ts';
import { vaultAccounts } from '../../main/cloud-client/credentials.ts';
import { CloudClientStatus } from '../../main/contract/cloud-status.ts';
import { newClient, startGateway, type Gateway, type TestClient } from './helpers/world.ts';

/**
 * The whole connect flow against the real reference gateway, with the real
 * Secret Service as the vault: connect (key pinned from GET keys), activate,
 * status, sync, restart, deactivate, disconnect. Secrets stay in the vault.
 */
let gw: Gateway;
let t: TestClient;
let c: CloudClient;
let license: { id: string; license_key: string };

beforeAll(async () => {
  gw = await startGateway();
  t = await newClient();
  c = t.client;
  license = await gw.license('pro');
});
afterAll(async () => {
  await t?.close();
  await gw?.stop();
});

describe('connect flow', () => {
  it('starts unconnected, on the local free policy', async () => {
    const s = c.status();
    expect(CloudClientStatus.parse(s)).toBeTruthy();
    expect(s.connected).toBe(false);
    expect(s.health.gateway).toMatchObject({
      connected: false,
      license: 'not_connected',
      entitlements: 'local',
      cloud_token: 'none',
    });
    expect(await c.entitlements.check('mcp.core')).toMatchObject({ allowed: true, plan: 'free' });
    expect(await c.entitlements.check('verto.translate')).toMatchObject({ allowed: false, plan: 'pro' });
    expect(c.api).toBeNull();
    await expect(c.sync()).rejects.toMatchObject({ code: 'invalid_site' });
  });

  it('refuses a gateway URL that would send the license key in the clear, and garbage', async () => {
    await expect(c.connect({ url: 'http://gateway.example.com' })).rejects.toMatchObject({ code: 'invalid_value' });
    await expect(c.connect({ url: 'not a url' })).rejects.toMatchObject({ code: 'invalid_value' });
    await expect(c.connect({ url: `${gw.url}/?x=1` })).rejects.toMatchObject({ code: 'invalid_value' });
    await expect(c.connect({ url: gw.url, publicKey: 'nope' })).rejects.toMatchObject({ code: 'invalid_value' });
    expect(c.status().connected).toBe(false);
  });

  it('connects: registers, pins the first published key (shown as the operator sees it), takes the first certificate', async () => {
    const r = await c.connect({ url: `${gw.url}/gateway/v1/`, environment: 'production', name: 'Test site' });
    const keys = await gw.op<Array<{ kid: string; fingerprint: string }>>('keys.show');
    expect(r.gateway_url).toBe(gw.url);
    expect(r.pinned_key).toEqual({ kid: keys[0]!.kid, fingerprint: keys[0]!.fingerprint, source: 'fetched' });
    expect(r.first_sync).toEqual({ ok: true });
    const s = c.status();
    expect(s).toMatchObject({
      connected: true,
      site_id: r.site_id,
      environment: 'production',
      pinned_key: { kid: keys[0]!.kid },
    });
    // no license yet: the certificate is the signed word that the site is on no plan (none, not a bad license)
    expect(s.health.gateway).toMatchObject({
      connected: true,
      license: 'none',
      entitlements: 'local',
      usage: 'synced',
      cloud_token: 'valid',
    });
    expect(s.certificate).toMatchObject({ usable: false, reason: 'license_not_active' });
    expect(await c.entitlements.check('mcp.core')).toMatchObject({ allowed: true });
    const sites = await gw.op<Array<{ id: string; name: string; status: string }>>('sites.list');
    expect(sites.find((x) => x.id === r.site_id)).toMatchObject({ name: 'Test site', status: 'active' });
    await expect(c.connect({ url: gw.url })).rejects.toMatchObject({ code: 'conflict' });
  });

  it('keeps the site secret in the vault only', async () => {
    const accounts = vaultAccounts(t.dataDir);
    const identity = JSON.parse((await t.vault.get(accounts.site))!);
    expect(identity.secret).toMatch(/^ghs_/);
    expect(t.vault.backend).toBe('keychain');
    const state = await readFile(join(t.dataDir, 'cloud-state.json'), 'utf8');
    expect(state).not.toContain(identity.secret);
    expect(state).not.toContain(identity.key_id);
    expect(t.logs()).not.toContain(identity.secret);
  });

  it('refuses a wrong license key with the gateway code and the request id, and keeps nothing of it', async () => {
    const err = await c.activate('ghl_' + 'A'.repeat(32)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudClientError);
    expect(err).toMatchObject({
      code: 'license_invalid',
      info: { httpStatus: 403, attempts: 1, stopped: 'not_retryable' },
    });
    expect((err as CloudClientError).requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    expect(await t.vault.get(vaultAccounts(t.dataDir).license)).toBeNull();
    expect(c.status().last_errors[0]).toMatchObject({
      operation: 'license/activate',
      code: 'license_invalid',
      request_id: (err as CloudClientError).requestId,
    });
    await expect(c.activate('not-a-key')).rejects.toMatchObject({ code: 'invalid_value' });
  });

  it('activates a license: the certificate grants the plan, the key is in the vault only', async () => {
    const r = await c.activate(license.license_key);
    expect(r.license).toMatchObject({ status: 'active', plan: 'pro' });
    expect(r.license.key_preview).not.toBe(license.license_key);
    const s = c.status();
    expect(s.health.gateway).toMatchObject({ license: 'active', entitlements: 'synced' });
    expect(s.health.products).toEqual({ aeo: 'active', code: 'active', verto: 'active', mcp: 'active', pro: 'active' });
    expect(await c.entitlements.decide('verto.translate')).toMatchObject({
      source: 'certificate',
      code: null,
      entitlement: { allowed: true, plan: 'pro' },
    });
    expect(await c.entitlements.check('agency.sites')).toMatchObject({ allowed: false, plan: 'agency' });
    expect(await t.vault.get(vaultAccounts(t.dataDir).license)).toBe(license.license_key);
    const state = await readFile(join(t.dataDir, 'cloud-state.json'), 'utf8');
    expect(state).not.toContain(license.license_key);
    expect(t.logs()).not.toContain(license.license_key);
  });

  it('a mistyped key while a license is active keeps the active key in the vault and the license in force', async () => {
    // The key was written before the request and deleted when it failed: the active license's key was gone from the vault.
    await expect(c.activate('ghl_' + 'B'.repeat(32))).rejects.toMatchObject({ code: 'license_invalid' });
    expect(await t.vault.get(vaultAccounts(t.dataDir).license)).toBe(license.license_key);
    expect(c.status().health.gateway).toMatchObject({ license: 'active', entitlements: 'synced' });
    expect(await c.entitlements.decide('verto.translate')).toMatchObject({
      source: 'certificate',
      entitlement: { allowed: true },
    });
  });

  it('answers every endpoint of part 1 through the typed client', async () => {
    const api = c.api!;
    expect((await api.health()).data.status).toBe('ok');
    expect((await api.siteStatus()).data.site.license.status).toBe('active');
    expect((await api.licenseStatus()).data.license.plan).toBe('pro');
    expect((await api.licenseRefresh()).data.certificate.alg).toBe('ed25519');
    expect((await api.products()).data.states.verto).toBe('active');
    expect((await api.features()).data.features.length).toBeGreaterThan(5);
    expect((await api.entitlements()).data.entitlements.some((e) => e.feature === 'verto.translate' && e.allowed)).toBe(
      true,
    );
    expect((await api.entitlementsCheck('verto.translate')).data.entitlement).toMatchObject({
      feature: 'verto.translate',
      allowed: true,
      plan: 'pro',
    });
    await expect(api.entitlementsCheck('agency.sites')).rejects.toMatchObject({
      code: 'entitlement_required',
      details: { required_plan: 'agency' },
    });
    expect((await api.usageLimits()).data.limits.length).toBeGreaterThan(0);
    expect((await api.usageSummary({ period: 'day' })).data.period).toBe('day');
    expect((await api.usageHistory({ period: 'month', limit: 10 })).data.items).toBeInstanceOf(Array);
    await expect(api.entitlementsCheck('NOT A FEATURE')).rejects.toMatchObject({ code: 'invalid_value' });
  });

  it('syncs on demand and reports to the gateway', async () => {
    const r = await c.sync();
    expect(r.certificate).toBe('accepted');
    expect(r.request_id).toMatch(/^[0-9a-f-]{36}$/);
    const s = c.status();
    expect(s.last_sync).not.toBeNull();
    expect(Date.parse(s.next_refresh_at!) - Date.now()).toBeGreaterThan(21 * 3600_000);
    const sites = await gw.op<Array<{ id: string; version: string | null }>>('sites.list');
    expect(sites.find((x) => x.id === s.site_id)!.version).not.toBeNull();
  });

  it('survives a restart: identity from the vault, certificate verified again from the state file', async () => {
    const before = c.status();
    c = await t.reopen();
    const after = c.status();
    expect(after).toMatchObject({ connected: true, site_id: before.site_id, last_sync: before.last_sync });
    expect(after.certificate).toMatchObject({ usable: true, reason: 'ok' });
    expect(await c.entitlements.check('verto.translate')).toMatchObject({ allowed: true });
  });

  it('deactivates: the signed answer takes the paid features away at once, the free ones stay', async () => {
    await c.deactivate();
    // the free plan applies: the refusal asks for a plan, it does not call the license revoked
    expect(await c.entitlements.decide('verto.translate')).toMatchObject({
      source: 'local',
      code: 'entitlement_required',
      entitlement: { allowed: false },
    });
    expect(await c.entitlements.check('mcp.core')).toMatchObject({ allowed: true });
    expect(await t.vault.get(vaultAccounts(t.dataDir).license)).toBeNull();
    // deactivated is the free plan, said so, not a license problem to warn about
    expect(c.status().license_state).toBe('deactivated');
    expect(c.status().warnings.map((w) => w.code)).not.toContain('cloud_license_inactive');
  });

  it('disconnects: the gateway stops the key, the vault and the state are cleared', async () => {
    const siteId = c.status().site_id!;
    const r = await c.disconnect();
    expect(r).toEqual({ site_id: siteId, remote: { ok: true }, unsent_events: 0 });
    const s = c.status();
    expect(s).toMatchObject({ connected: false, site_id: null, certificate: null, gateway_url: null });
    for (const account of Object.values(vaultAccounts(t.dataDir))) expect(await t.vault.get(account)).toBeNull();
    const sites = await gw.op<Array<{ id: string; status: string }>>('sites.list');
    expect(sites.find((x) => x.id === siteId)!.status).toBe('disconnected');
    expect(await c.entitlements.check('verto.translate')).toMatchObject({ allowed: false });
    // and a new identity can be made
    const again = await c.connect({ url: gw.url, environment: 'staging' });
    expect(again.site_id).not.toBe(siteId);
    expect(c.status().environment).toBe('staging');
  });
});
