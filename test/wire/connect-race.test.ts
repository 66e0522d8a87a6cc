import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { vaultAccounts } from '../../main/cloud-client/credentials.ts';
import { CloudStatusView } from '../../main/contract/cloud-actions.ts';
import { startWireWorld, type WireWorld } from './helpers/wire-world.ts';

/**
 * `cloud connect` and `cloud disconnect` from two places at once (the
 * console and the CLI both reach the service's admin API), against the real
 * gateway: the second one answers 409 conflict and says why, and the vault
 * and the state never hold a mix of two attempts.
 */
let w: WireWorld;

beforeAll(async () => {
  w = await startWireWorld();
}, 120_000);
afterEach(() => w.proxy.reset());
afterAll(async () => {
  await w?.stop();
});

const status = async () => CloudStatusView.parse((await w.admin('GET', 'cloud/status')).body.data);
const vaultSiteId = async () => {
  const raw = await w.svc.core.vault.get(vaultAccounts(w.svc.dataDir).site);
  return raw === null ? null : (JSON.parse(raw) as { site_id: string }).site_id;
};

/** Holds the gateway's answer to `path` until `release()`; `seen` resolves once the request got there. */
function holdAnswers(path: string) {
  let release!: () => void;
  const until = new Promise<void>((r) => (release = r));
  let arrived!: () => void;
  const seen = new Promise<void>((r) => (arrived = r));
  w.proxy.rule((r) => {
    if (!r.path.endsWith(path)) return undefined;
    arrived();
    return { kind: 'hold', until };
  });
  return { seen, release };
}

describe('connect and disconnect from two places at once', () => {
  it('two connects at once: one connects, the other is 409 conflict; one site, one identity', async () => {
    const [a, b] = await Promise.all([
      w.admin('POST', 'cloud/connect', { url: w.proxy.url }),
      w.admin('POST', 'cloud/connect', { url: w.proxy.url }),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([200, 409]);
    const refused = a.status === 409 ? a : b;
    const won = a.status === 200 ? a : b;
    expect(refused.body).toMatchObject({
      ok: false,
      code: 'conflict',
      message: expect.stringMatching(/a cloud connect is in progress/),
    });
    expect(w.proxy.count('/sites/register')).toBe(1);
    const siteId = (won.body.data as { site_id: string }).site_id;
    expect((await status()).site_id).toBe(siteId);
    expect(await vaultSiteId()).toBe(siteId);
    expect((await w.admin('POST', 'cloud/disconnect', {})).status).toBe(200);
  });

  it('a disconnect while a connect runs is 409 conflict; the connect finishes whole, a later disconnect clears it', async () => {
    const held = holdAnswers('/sites/register');
    const connecting = w.admin('POST', 'cloud/connect', { url: w.proxy.url });
    await held.seen;
    const d = await w.admin('POST', 'cloud/disconnect', {});
    held.release();
    expect(d.status).toBe(409);
    expect(d.body).toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/a cloud connect is in progress/),
    });
    const c = await connecting;
    expect(c.status).toBe(200);
    const siteId = (c.body.data as { site_id: string }).site_id;
    expect(await status()).toMatchObject({ connected: true, site_id: siteId });
    expect(await vaultSiteId()).toBe(siteId);

    w.proxy.reset();
    expect((await w.admin('POST', 'cloud/disconnect', {})).status).toBe(200);
    expect(await status()).toMatchObject({ connected: false });
    expect(await vaultSiteId()).toBeNull();
  });
});
