import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidv7 } from '../../main/lib/ids.ts';
import { siteById, type SiteRow } from '../../cloud/repo/sites-repo.ts';
import {
  flushSettles,
  release,
  reserve,
  settle,
  settleDurably,
  sweepReservations,
} from '../../cloud/services/reservations-service.ts';
import { DatabaseUnavailable } from '../../cloud/db/db-unavailable.ts';
import type { CloudUsageEvent } from '../../main/contract/cloud/index.ts';
import { register } from './helpers/client.ts';
import { startHarness, type Harness } from './helpers/cloud-harness.ts';

/** Reservation and settlement (the seam ai/generate uses), against the real database. */
let h: Harness;
let site: SiteRow;
const tokens = async () =>
  (
    await h.svc.ctx.db.query<{ used: number; reserved: number }>(
      `SELECT used::int, reserved::int FROM usage_counters WHERE scope = 'site' AND subject = $1 AND metric = 'ai_tokens' AND period = 'month'`,
      [site.id],
    )
  ).rows[0] ?? { used: 0, reserved: 0 };
const aiEvent = (n: number): CloudUsageEvent => ({
  event_id: uuidv7(),
  event: 'ai.generation.completed',
  site_id: site.id,
  product: 'pro',
  feature: 'ai.generate',
  model: 'm',
  units: 0,
  tokens_input: n,
  tokens_output: 0,
  timestamp: new Date().toISOString(),
});

beforeAll(async () => {
  h = await startHarness();
  const c = await register(h.gateway);
  const l = await h.op<{ license_key: string }>('licenses.create', { plan: 'pro' });
  await c.post('license/activate', { license_key: l.license_key });
  await h.op('limits.set', {
    scope: 'site',
    subject: c.creds.site_id,
    metric: 'ai_tokens',
    period: 'month',
    limit: 1000,
  });
  site = (await siteById(h.svc.ctx.db, c.creds.site_id))!;
}, 180_000);
afterAll(() => h?.stop());

describe('reservations', () => {
  it('concurrent reservations never add up past the limit', async () => {
    const out = await Promise.allSettled(Array.from({ length: 12 }, () => reserve(h.svc.ctx, site, 'ai_tokens', 100)));
    const held = out.filter((o) => o.status === 'fulfilled');
    expect(held).toHaveLength(10);
    for (const o of out)
      if (o.status === 'rejected')
        expect(o.reason).toMatchObject({ code: 'quota_exceeded', details: expect.objectContaining({ limit: 1000 }) });
    expect(await tokens()).toEqual({ used: 0, reserved: 1000 });
    for (const o of held) await release(h.svc.ctx, (o as PromiseFulfilledResult<{ id: string }>).value.id);
    expect(await tokens()).toEqual({ used: 0, reserved: 0 });
  });

  it('settle records the actual amount exactly once; a second settle or a release after it does nothing', async () => {
    const r = await reserve(h.svc.ctx, site, 'ai_tokens', 300);
    const e = aiEvent(120);
    expect(await settle(h.svc.ctx, site, r, e)).toBe(true);
    expect(await settle(h.svc.ctx, site, r, e)).toBe(false);
    expect(await release(h.svc.ctx, r.id)).toBe(false);
    expect(await tokens()).toEqual({ used: 120, reserved: 0 });
    const rows = await h.svc.ctx.db.query('SELECT 1 FROM usage_events WHERE site_id = $1 AND event_id = $2', [
      site.id,
      e.event_id,
    ]);
    expect(rows.rows).toHaveLength(1);
  });

  it('work that outlived its hold is still recorded once when it settles, without taking the hold off twice', async () => {
    const before = await tokens();
    const r = await reserve(h.svc.ctx, site, 'ai_tokens', 80, -1);
    expect(await sweepReservations(h.svc.ctx)).toBe(1);
    expect(await tokens()).toEqual(before);
    const e = aiEvent(30);
    expect(await settle(h.svc.ctx, site, r, e)).toBe(true);
    expect(await settle(h.svc.ctx, site, r, e)).toBe(false);
    expect(await tokens()).toEqual({ used: before.used + 30, reserved: before.reserved });
  });

  it('a settlement the database refused is tried once more when the service stops, not left to a timer the stop cuts', async () => {
    const before = await tokens();
    const r = await reserve(h.svc.ctx, site, 'ai_tokens', 50);
    const e = aiEvent(40);
    const db = h.svc.ctx.db;
    const query = db.query;
    let refused = 0;
    db.query = (async (sql: string, params?: readonly unknown[]) => {
      if (sql.includes('gatehouse_settle') && refused++ === 0)
        throw new DatabaseUnavailable('Connection terminated unexpectedly');
      return query.call(db, sql, params);
    }) as typeof db.query;
    try {
      await settleDurably(h.svc.ctx, site, r, e);
      expect(refused).toBe(1);
      await flushSettles(h.svc.ctx);
    } finally {
      db.query = query;
    }
    expect(refused).toBe(2);
    expect(await tokens()).toEqual({ used: before.used + 40, reserved: before.reserved });
    expect(
      (await db.query('SELECT 1 FROM usage_events WHERE site_id = $1 AND event_id = $2', [site.id, e.event_id])).rows,
    ).toHaveLength(1);
  });

  it('a hold that does not fit changes nothing', async () => {
    const before = await tokens();
    await expect(reserve(h.svc.ctx, site, 'ai_tokens', 5000)).rejects.toMatchObject({ code: 'quota_exceeded' });
    await expect(reserve(h.svc.ctx, site, 'ai_tokens', 1000 - before.used - before.reserved + 1)).rejects.toMatchObject(
      { code: 'quota_exceeded', details: expect.objectContaining({ scope: 'site', limit: 1000 }) },
    );
    expect(await tokens()).toEqual(before);
    expect(
      (await h.svc.ctx.db.query(`SELECT count(*)::int AS n FROM usage_reservations WHERE status = 'held'`)).rows[0],
    ).toEqual({ n: 0 });
  });

  it('a reservation nobody closes is released when it times out', async () => {
    const before = await tokens();
    await reserve(h.svc.ctx, site, 'ai_tokens', 50, -1);
    expect((await tokens()).reserved).toBe(before.reserved + 50);
    expect(await sweepReservations(h.svc.ctx)).toBe(1);
    expect(await tokens()).toEqual(before);
  });
});
