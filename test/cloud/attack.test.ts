import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidv7 } from '../../main/lib/ids.ts';
import { rawRequest, register, type SiteClient } from './helpers/client.ts';
import { startHarness, type Harness } from './helpers/cloud-harness.ts';
import { accountWithSites, type TestAccount } from './helpers/accounts.ts';

/**
 * An attacker's read of the gateway (part 1 and 2) against the real service:
 * values the wire contract lets through that the gateway could not handle,
 * and a captured request replayed at the edge of its window. Each test here
 * failed before the fix its commit names.
 */
let h: Harness;
let own: TestAccount;
let site: SiteClient;

beforeAll(async () => {
  h = await startHarness();
  own = await accountWithSites(h, 'enterprise', 1);
  site = own.sites[0]!;
}, 180_000);
afterAll(() => h?.stop());

const ev = (s: SiteClient, o: Record<string, unknown> = {}) => ({
  event_id: uuidv7(),
  event: 'mcp.tool.called',
  site_id: s.creds.site_id,
  product: 'mcp',
  feature: 'mcp.core',
  model: '',
  units: 1,
  tokens_input: 0,
  tokens_output: 0,
  timestamp: new Date().toISOString(),
  ...o,
});
const asAccount = (path: string, o: { method?: string; body?: unknown } = {}) =>
  rawRequest(
    `${h.gateway}/${path}`,
    o.method ?? 'GET',
    { Authorization: `Bearer ${own.key}` },
    o.body === undefined ? undefined : JSON.stringify(o.body),
  );

/** `at` written in local time at a UTC offset of `minutes` (RFC 3339 allows hours up to 23). */
function withOffset(at: Date, minutes: number): string {
  const local = new Date(at.getTime() + minutes * 60_000).toISOString().slice(0, 19);
  const sign = minutes < 0 ? '-' : '+';
  const m = Math.abs(minutes);
  return `${local}${sign}${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}

describe('usage/record: event times the contract accepts', () => {
  it('records an event written at a UTC offset beyond ±15:59 (the database refused it: 500, retried by every client)', async () => {
    for (const minutes of [20 * 60, -(23 * 60 + 59)]) {
      const e = ev(site, { timestamp: withOffset(new Date(), minutes) });
      const r = await site.post('usage/record', e);
      expect(r.body).toEqual({
        success: true,
        results: [{ event_id: e.event_id, status: 'accepted' }],
        accepted: 1,
        duplicate: 0,
        rejected: 0,
      });
    }
  });

  it('stores an event in the period it was counted in (a sub-millisecond time just before midnight)', async () => {
    const s = (await accountWithSites(h, 'pro', 1)).sites[0]!;
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const e = ev(s, { timestamp: `${yesterday}T23:59:59.9999999Z`, units: 3 });
    expect((await s.post('usage/record', e)).body.accepted).toBe(1);
    const counted = await h.svc.ctx.db.query<{ period_start: string; used: number }>(
      `SELECT period_start, used::int AS used FROM usage_counters WHERE scope = 'site' AND subject = $1 AND metric = 'mcp_actions' AND period = 'day'`,
      [s.creds.site_id],
    );
    expect(counted.rows.map((r) => [new Date(r.period_start).toISOString(), r.used])).toEqual([
      [`${yesterday}T00:00:00.000Z`, 3],
    ]);
    // The history (from the stored events) agrees with the counter that holds the quota.
    const hist = await s.get('usage/history', { query: 'period=day' });
    expect(
      hist.body.items.map((i: { period_start: string; amount: number }) => [
        new Date(i.period_start).toISOString(),
        i.amount,
      ]),
    ).toEqual([[`${yesterday}T00:00:00.000Z`, 3]]);
  });
});

describe('times in queries and report requests', () => {
  const expect400 = (r: { status: number; body: { error?: { code: string; message: string } } }, field: string) => {
    expect([r.status, r.body.error?.code]).toEqual([400, 'invalid_request']);
    expect(r.body.error!.message).toContain(field);
  };

  it('a time the database cannot hold is a 400 naming the field, not a 500', async () => {
    expect400(await site.get('usage/history', { query: 'from=0000-01-01T00:00:00Z' }), 'from');
    expect400(await site.get('usage/summary', { query: 'period=day&at=9999-12-31T23:59:59Z' }), 'at');
    expect400(await asAccount('agency/usage?period=day&from=0000-01-01T00:00:00Z&to=0000-01-02T00:00:00Z'), 'from');
    expect400(await asAccount('enterprise/logs?from=0000-01-01T00:00:00Z'), 'from');
    expect400(
      await asAccount('agency/reports', {
        method: 'POST',
        body: { period: 'day', from: '0000-01-01T00:00:00Z', to: '0000-01-02T00:00:00Z' },
      }),
      'from',
    );
  });

  it('a year before 100 is not read as 19xx', async () => {
    // Date.UTC takes the years 0 to 99 as 1900 to 1999: the summary answered the wrong period.
    expect400(await site.get('usage/summary', { query: 'period=day&at=0001-01-01T00:00:00Z' }), 'at');
  });

  it('the edges of the range still work', async () => {
    expect((await site.get('usage/summary', { query: 'period=month&at=1970-01-01T00:00:00Z' })).status).toBe(200);
    const late = await site.get('usage/summary', { query: 'period=month&at=9998-12-31T23:59:59Z' });
    expect([late.status, late.body.reset_at]).toEqual([200, '9999-01-01T00:00:00.000Z']);
  });
});

describe('a captured signed request, replayed', () => {
  it('is refused up to the last second its created time is inside the window', async () => {
    // A gateway clock on a whole second; the site's clock 300 s ahead (the most the window takes).
    let clock = Math.ceil(Date.now() / 1000) * 1000;
    const edge = await startHarness({ now: () => new Date(clock) });
    try {
      const s = await register(edge.gateway);
      const created = clock / 1000 + 300;
      const nonce = 'cmVwbGF5LXJlcGxheS1yZQ';
      expect((await s.get('sites/status', { created, nonce })).status).toBe(200);
      // 600 s later the created time is still inside the window (skew -300 s) for the rest of that second.
      clock += 600_000;
      const replay = await s.get('sites/status', { created, nonce });
      expect([replay.status, replay.body.error?.code]).toEqual([401, 'signature_invalid']);
      clock += 999;
      const late = await s.get('sites/status', { created, nonce });
      expect([late.status, late.body.error?.code]).toEqual([401, 'signature_invalid']);
      // A second later the created time is outside the window: token_expired, whatever the nonce.
      clock += 1;
      const expired = await s.get('sites/status', { created, nonce });
      expect([expired.status, expired.body.error?.code]).toEqual([401, 'token_expired']);
    } finally {
      await edge.stop();
    }
  });
});

describe('behind a load balancer (--trust-proxy): the per-address limits', () => {
  it('an unregistered caller cannot mint a fresh address per request with X-Forwarded-For or Forwarded, or both', async () => {
    const lb = await startHarness({ trustProxy: true, rateLimits: { perAddress: 0, perSite: 0, register: 2 } });
    try {
      const body = JSON.stringify({ url: 'https://site.example', environment: 'staging' });
      // What a proxy that appends (nginx $proxy_add_x_forwarded_for, cloud load balancers) passes on:
      // the caller's own header first, then the address the proxy saw.
      const viaProxy = (i: number, kind: 'xff' | 'forwarded') =>
        rawRequest(
          `${lb.gateway}/sites/register`,
          'POST',
          kind === 'xff'
            ? { 'X-Forwarded-For': `198.51.100.${i}, 203.0.113.9` }
            : { Forwarded: `for=198.51.100.${i}, for=203.0.113.9` },
          body,
        );
      const xff = [];
      for (let i = 1; i <= 4; i++) xff.push((await viaProxy(i, 'xff')).status);
      expect(xff).toEqual([200, 200, 429, 429]);
      // Forwarded is not read: whatever it names, these share one budget (the peer's), fresh here.
      const fwd = [];
      for (let i = 5; i <= 8; i++) fwd.push((await viaProxy(i, 'forwarded')).status);
      expect(fwd).toEqual([200, 200, 429, 429]);
      // The caller's own Forwarded header beside the X-Forwarded-For the proxy appended to: still its real budget.
      const both = [];
      for (let i = 9; i <= 10; i++)
        both.push(
          (
            await rawRequest(
              `${lb.gateway}/sites/register`,
              'POST',
              { Forwarded: `for=198.51.100.${i}`, 'X-Forwarded-For': '203.0.113.9' },
              body,
            )
          ).status,
        );
      expect(both).toEqual([429, 429]);
      // Another client behind the same proxy has its own budget.
      const other = await rawRequest(
        `${lb.gateway}/sites/register`,
        'POST',
        { 'X-Forwarded-For': '203.0.113.10' },
        body,
      );
      expect(other.status).toBe(200);
    } finally {
      await lb.stop();
    }
  });
});
