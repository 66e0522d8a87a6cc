import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { vaultAccounts } from '../../main/cloud-client/credentials.ts';
import type { Certificate } from '../../main/contract/cloud/certificate.ts';
import { envelope } from '../fixtures/fault-proxy.ts';
import { gatewaySuite, type TestClient } from './helpers/world.ts';

/**
 * Certificates replayed by someone between the client and the real gateway
 * (a fault proxy that puts real signed certificates into real answers), and
 * operations that overlap (connect with connect, disconnect with connect).
 * Every certificate here verifies with the pinned key: the gateway signed it,
 * only for another site, or before the one the client holds.
 */
const suite = gatewaySuite({ proxy: true });
const pool = suite.pool;

/** The signed certificate a client saved (as the gateway sent it). */
const savedCertificate = async (t: TestClient): Promise<Certificate> =>
  JSON.parse(await readFile(join(t.dataDir, 'cloud-state.json'), 'utf8')).certificate;
const issuedAt = (c: Certificate): string => JSON.parse(Buffer.from(c.payload, 'base64url').toString('utf8')).issued_at;
const allowed = async (t: TestClient, feature: string) => (await t.client.entitlements.check(feature)).allowed;
/** sites/sync answered with `cert` in place of the gateway's certificate. */
const syncAnswersWith = (cert: Certificate) =>
  suite.proxy.rule((r) =>
    r.path.endsWith('/sites/sync')
      ? { kind: 'rewrite', change: (a) => ({ ...(a as object), certificate: cert }) }
      : undefined,
  );

describe('a certificate of another site or an older one is refused, and the held one stays', () => {
  it("another site's certificate (signed by the same gateway) in a sites/sync answer", async () => {
    const other = await pool.connected(suite.gw.url, () => suite.gw.license('pro'));
    const theirs = await savedCertificate(other.t);
    const { t, c } = await pool.connected(suite.proxy.url, () => suite.gw.license('free'));
    const mine = c.status().certificate!;
    expect(await allowed(t, 'verto.translate')).toBe(false);

    syncAnswersWith(theirs);
    const r = await c.sync();
    expect(r.certificate).toBe('refused');
    expect(await allowed(t, 'verto.translate')).toBe(false);
    expect(c.status().certificate).toEqual(mine);
    expect(c.status().last_errors[0]).toMatchObject({
      operation: 'certificate',
      code: 'signature_invalid',
      message: expect.stringMatching(/signed for another site/),
    });
    expect(c.status().warnings.map((w) => w.code)).toContain('cloud_certificate_refused');
    // and nothing of it was saved: after a restart the site's own certificate is held
    const reopened = await t.reopen();
    expect(reopened.status().certificate).toEqual(mine);
    expect(await allowed(t, 'verto.translate')).toBe(false);
  });

  it("another site's certificate in a refusal (the error's signed certificate, notice())", async () => {
    const other = await pool.connected(suite.gw.url, () => suite.gw.license('pro'));
    const theirs = await savedCertificate(other.t);
    const { t, c } = await pool.connected(suite.proxy.url, () => suite.gw.license('free'));
    const mine = c.status().certificate!;
    suite.proxy.script({ kind: 'status', status: 403, body: envelope('license_expired', { certificate: theirs }) });
    await expect(c.sync()).rejects.toMatchObject({ code: 'license_expired' });
    expect(await allowed(t, 'verto.translate')).toBe(false);
    expect(c.status().certificate).toEqual(mine);
    expect(c.status().last_errors.find((e) => e.operation === 'certificate')).toMatchObject({
      code: 'signature_invalid',
      message: expect.stringMatching(/signed for another site/),
    });
  });

  it('an older certificate of this site replayed after the license was revoked', async () => {
    const { t, c, license } = await pool.connected(suite.proxy.url, () => suite.gw.license('pro'));
    const old = await savedCertificate(t);
    expect(await allowed(t, 'verto.translate')).toBe(true);
    await new Promise((r) => setTimeout(r, 5)); // the revocation's certificate is issued later
    await suite.gw.op('licenses.revoke', { id: license.id });
    await c.sync();
    const revoked = c.status().certificate!;
    expect(revoked.license.status).toBe('invalid');
    expect(Date.parse(revoked.issued_at)).toBeGreaterThan(Date.parse(issuedAt(old)));
    expect(await allowed(t, 'verto.translate')).toBe(false);

    syncAnswersWith(old);
    const r = await c.sync();
    expect(r.certificate).toBe('refused');
    expect(await allowed(t, 'verto.translate')).toBe(false);
    expect(c.status().certificate).toEqual(revoked);
    expect(c.status().last_errors[0]).toMatchObject({
      operation: 'certificate',
      code: 'signature_invalid',
      message: expect.stringMatching(/before the one already held.*replayed/),
    });

    // the same old one in a refusal's body
    suite.proxy.reset();
    suite.proxy.script({ kind: 'status', status: 403, body: envelope('license_invalid', { certificate: old }) });
    await expect(c.sync()).rejects.toMatchObject({ code: 'license_invalid' });
    expect(await allowed(t, 'verto.translate')).toBe(false);
    expect(c.status().certificate).toEqual(revoked);
  });

  it('a deactivation whose license/status fails grants nothing from the licensed certificate, also after a restart', async () => {
    const { t, c } = await pool.connected(suite.proxy.url, () => suite.gw.license('pro'));
    expect(await allowed(t, 'verto.translate')).toBe(true);
    suite.proxy.rule((r) =>
      r.path.endsWith('/license/status')
        ? { kind: 'status', status: 400, body: envelope('invalid_request') }
        : undefined,
    );
    await c.deactivate();
    expect(await allowed(t, 'verto.translate')).toBe(false);
    // The licensed certificate stayed in the state file and was taken again at start: paid features until the next sync.
    const reopened = await t.reopen();
    expect(reopened.status().certificate).toBeNull();
    expect(await allowed(t, 'verto.translate')).toBe(false);
  });

  it('a deactivation the gateway took grants nothing from the licensed certificate even when a later local step fails', async () => {
    // The stand-in for a kill between the gateway's answer and the local writes: the vault refuses to forget the key.
    const { t, c } = await pool.connected(suite.proxy.url, () => suite.gw.license('pro'));
    const realDelete = t.vault.delete.bind(t.vault);
    t.vault.delete = async () => {
      throw new Error('the keychain is locked');
    };
    try {
      await expect(c.deactivate()).rejects.toThrow(/keychain is locked/);
    } finally {
      t.vault.delete = realDelete;
    }
    expect(await allowed(t, 'verto.translate')).toBe(false);
    await t.reopen();
    expect(await allowed(t, 'verto.translate')).toBe(false);
  });

  it('an older certificate replayed after a restart is refused although none was saved (the mark outlives the certificate)', async () => {
    const { t, c } = await pool.connected(suite.proxy.url, () => suite.gw.license('pro'));
    const licensed = await savedCertificate(t);
    suite.proxy.rule((r) =>
      r.path.endsWith('/license/status')
        ? { kind: 'status', status: 400, body: envelope('invalid_request') }
        : undefined,
    );
    await c.deactivate(); // no signed word: the licensed certificate is dropped, from the state file too
    suite.proxy.reset();
    const reopened = await t.reopen();
    syncAnswersWith(licensed);
    expect((await reopened.sync()).certificate).toBe('refused');
    expect(await allowed(t, 'verto.translate')).toBe(false);
  });

  it("another site's certificate put in the state file grants nothing after a restart", async () => {
    const other = await pool.connected(suite.gw.url, () => suite.gw.license('pro'));
    const theirs = await savedCertificate(other.t);
    const { t } = await pool.connected(suite.gw.url, () => suite.gw.license('free'));
    const file = join(t.dataDir, 'cloud-state.json');
    await t.client.close();
    const doc = JSON.parse(await readFile(file, 'utf8'));
    await writeFile(file, JSON.stringify({ ...doc, certificate: theirs }));
    const c = await t.reopen();
    expect(c.status().certificate).toBeNull();
    expect(await allowed(t, 'verto.translate')).toBe(false);
    expect(t.logs()).toMatch(/saved certificate was not used: it was signed for another site/);
  });
});

/** What the vault and the state file hold now: one consistent identity, or nothing at all. */
async function stored(t: TestClient) {
  const accounts = vaultAccounts(t.dataDir);
  const site = await t.vault.get(accounts.site);
  const state = JSON.parse(await readFile(join(t.dataDir, 'cloud-state.json'), 'utf8'));
  return {
    vaultSite: site === null ? null : (JSON.parse(site) as { site_id: string }).site_id,
    vaultPin: await t.vault.get(accounts.pin),
    vaultLicense: await t.vault.get(accounts.license),
    connection: state.connection as { phase: string } | null,
    certificate: state.certificate as Certificate | null,
    license: state.license as unknown,
    lastSync: state.last_sync as string | null,
  };
}

/** Holds the gateway's answers on `path` (only the first one with `firstOnly`) until `release()`; `seen` resolves when the first request got there. */
function holdAnswers(path: string, o: { firstOnly?: boolean } = {}) {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let arrived!: () => void;
  const seen = new Promise<void>((r) => (arrived = r));
  let held = 0;
  suite.proxy.rule((r) => {
    if (!r.path.endsWith(path) || (o.firstOnly && held > 0)) return undefined;
    held++;
    arrived();
    return { kind: 'hold', until: released };
  });
  return { seen, release };
}

describe('overlapping connects and disconnects', () => {
  it('two connects at once: one connects, the other answers conflict; one site registered, one identity kept', async () => {
    const t = await pool.fresh();
    const results = await Promise.allSettled([
      t.client.connect({ url: suite.proxy.url }),
      t.client.connect({ url: suite.proxy.url }),
    ]);
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(ok).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.reason).toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/a cloud connect is in progress/),
    });
    expect(suite.proxy.count('/sites/register')).toBe(1);
    const s = await stored(t);
    expect(s.connection).toMatchObject({ phase: 'connected' });
    expect(s.vaultSite).toBe((ok[0] as PromiseFulfilledResult<{ site_id: string }>).value.site_id);
    expect(t.client.siteId).toBe(s.vaultSite);
  });

  it('a disconnect while a connect runs answers conflict and changes nothing; the connect finishes whole', async () => {
    const t = await pool.fresh();
    const held = holdAnswers('/sites/register');
    const connecting = t.client.connect({ url: suite.proxy.url });
    await held.seen;
    const disconnected = await t.client.disconnect().catch((e: unknown) => e);
    held.release();
    expect(disconnected).toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/a cloud connect is in progress/),
    });
    const r = await connecting;
    const s = await stored(t);
    expect(s.connection).toMatchObject({ phase: 'connected' });
    expect(s.vaultSite).toBe(r.site_id);
    expect(t.client.connected()).toBe(true);
    // asked again once the connect is done, it disconnects and leaves nothing behind
    suite.proxy.reset();
    await t.client.disconnect();
    expect(await stored(t)).toMatchObject({ vaultSite: null, vaultPin: null, connection: null, certificate: null });
  });

  it('a disconnect during an activation: the activation writes nothing back (no license key, license or certificate)', async () => {
    const t = await pool.fresh();
    await t.client.connect({ url: suite.proxy.url });
    const lic = await suite.gw.license('pro');
    const held = holdAnswers('/license/activate');
    const activating = t.client.activate(lic.license_key).catch((e: unknown) => e);
    await held.seen;
    suite.proxy.reset(); // the disconnect goes through
    await t.client.disconnect();
    held.release();
    expect(await activating).toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/disconnected while the activation ran/),
    });
    expect(await stored(t)).toMatchObject({
      vaultSite: null,
      vaultPin: null,
      vaultLicense: null,
      connection: null,
      certificate: null,
      license: null,
    });
    expect(t.client.status().certificate).toBeNull();
  });

  it('a disconnect during a sync: the sync writes nothing back (no certificate, no last sync)', async () => {
    const t = await pool.fresh();
    await t.client.connect({ url: suite.proxy.url });
    await t.client.activate((await suite.gw.license('pro')).license_key);
    const held = holdAnswers('/sites/sync');
    const syncing = t.client.sync().catch((e: unknown) => e);
    await held.seen;
    suite.proxy.reset();
    await t.client.disconnect();
    held.release();
    expect(await syncing).toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/disconnected while the sync ran/),
    });
    expect(await stored(t)).toMatchObject({
      vaultSite: null,
      connection: null,
      certificate: null,
      license: null,
      lastSync: null,
    });
    expect(t.client.status().certificate).toBeNull();
  });

  it('two activations at once take turns: the vault keeps the key of the license the state and the certificate show', async () => {
    const t = await pool.fresh();
    await t.client.connect({ url: suite.proxy.url });
    const [first, second] = [await suite.gw.license('pro'), await suite.gw.license('agency')];
    const held = holdAnswers('/license/activate', { firstOnly: true });
    const a1 = t.client.activate(first.license_key);
    await held.seen;
    const a2 = t.client.activate(second.license_key);
    await new Promise((r) => setTimeout(r, 300)); // time for the second to overtake, if it can
    held.release();
    await Promise.all([a1, a2]);
    const s = await stored(t);
    expect(s.vaultLicense).toBe(second.license_key);
    expect(s.license).toMatchObject({ plan: 'agency' });
    expect(t.client.status().certificate!.license).toMatchObject({ plan: 'agency' });
  });

  it('two syncs at once take turns: both certificates are taken, none refused as older', async () => {
    const t = await pool.fresh();
    await t.client.connect({ url: suite.proxy.url });
    await t.client.activate((await suite.gw.license('pro')).license_key);
    const held = holdAnswers('/sites/sync', { firstOnly: true });
    const s1 = t.client.sync();
    await held.seen;
    const s2 = t.client.sync();
    await new Promise((r) => setTimeout(r, 300));
    held.release();
    const results = await Promise.all([s1, s2]);
    expect(results.map((r) => r.certificate)).toEqual(['accepted', 'accepted']);
    expect(t.client.status().last_errors.filter((e) => e.operation === 'certificate')).toEqual([]);
    expect(t.client.status().warnings.map((w) => w.code)).not.toContain('cloud_certificate_refused');
  });
});
