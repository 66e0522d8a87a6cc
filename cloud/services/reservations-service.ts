import { randomUUID } from 'node:crypto';
import type { CloudUsageEvent, Metric } from '../../main/contract/cloud/index.ts';
import { secondsUntil } from '../domain/periods.ts';
import { countersFor, type CounterKey } from '../domain/usage-rules.ts';
import { CloudError } from '../errors.ts';
import { addToCounters, adjustCounters } from '../repo/counters-repo.ts';
import { insertEvents } from '../repo/events-repo.ts';
import { closeReservation, expiredReservations, insertReservation, reservationById } from '../repo/reservations-repo.ts';
import type { SiteRow } from '../repo/sites-repo.ts';
import type { Ctx } from './context.ts';
import { deltasFor, limitMap, quotaDetails, scopesOf } from './usage-service.ts';

/**
 * Reservation and settlement, for metrics known only afterwards (AI tokens,
 * issue 12's ai/generate): reserve an upper bound against every limit before
 * the work, settle to the actual amount after (recording the usage event in
 * the same transaction, so it counts exactly once), release on failure; a
 * reservation nobody closes is released by the sweeper when it times out.
 * `reserved` counts against limits like `used`, so concurrent reservations
 * can never add up past a limit.
 */
export const RESERVATION_TTL_MS = 5 * 60_000;

export interface Reservation {
  id: string;
  metric: Metric;
  amount: number;
  expires_at: string;
}

export async function reserve(ctx: Ctx, site: SiteRow, metric: Metric, amount: number, ttlMs = RESERVATION_TTL_MS): Promise<Reservation> {
  if (!Number.isSafeInteger(amount) || amount < 0) throw new CloudError('invalid_request', 'a reservation amount is a whole number of units');
  const now = ctx.now();
  const id = `rsv_${randomUUID()}`;
  const expires = new Date(now.getTime() + ttlMs).toISOString();
  return ctx.db.transaction(async (tx) => {
    const limits = await limitMap(tx, site, now);
    const deltas = countersFor(scopesOf(site), [{ metric, amount }], now).map((c) => ({ ...c, limit: limits.get(`${c.scope}|${c.subject}|${c.metric}|${c.period}`) ?? null }));
    const over = await addToCounters(tx, deltas, 'reserved');
    if (over) {
      const quota = await quotaDetails(tx, over);
      throw new CloudError('quota_exceeded', `the ${quota.period === "day" ? "daily" : "monthly"} ${quota.metric} limit of the ${quota.scope} (${quota.limit}) has no room for ${amount} more; it resets at ${quota.reset_at}`, { ...quota }, { retryAfter: secondsUntil(new Date(quota.reset_at), now) });
    }
    const counters: CounterKey[] = deltas.map(({ scope, subject, metric: m, period, period_start }) => ({ scope, subject, metric: m, period, period_start }));
    await insertReservation(tx, { id, site_id: site.id, metric, amount, counters, expires_at: expires }, now);
    return { id, metric, amount, expires_at: expires };
  });
}

/**
 * Settles a reservation with the event that records the actual use. The
 * reserved amount leaves the counters it was put on; the event then counts
 * like any recorded event (without a limit check: the work is done, and the
 * reservation was its upper bound). Settling twice does nothing and answers
 * false. A reservation the sweeper released already (the work outlived its
 * time) still gets its event: the work was done and is counted once.
 */
export async function settle(ctx: Ctx, site: SiteRow, reservationId: string, event: CloudUsageEvent): Promise<boolean> {
  const now = ctx.now();
  return ctx.db.transaction(async (tx) => {
    const r = await closeReservation(tx, reservationId, 'settled', now);
    if (r) {
      if (r.site_id !== site.id) throw new CloudError('internal_error', 'a reservation was settled for another site');
      await adjustCounters(tx, r.counters.map((c) => ({ ...c, used: 0, reserved: -r.amount })));
    } else {
      const prior = await reservationById(tx, reservationId);
      if (!prior || prior.status !== 'released' || prior.site_id !== site.id) return false;
      await tx.query(`UPDATE usage_reservations SET status = 'settled', closed_at = $2 WHERE id = $1 AND status = 'released'`, [reservationId, now]);
      ctx.log.warn('a reservation was settled after it timed out: usage recorded without its hold', { site_id: site.id, reservation_id: reservationId });
    }
    const inserted = await insertEvents(tx, site.id, [event], now);
    if (inserted.size) await addToCounters(tx, deltasFor(scopesOf(site), event, new Map()));
    return true;
  });
}

export async function release(ctx: Pick<Ctx, 'db' | 'now'>, reservationId: string): Promise<boolean> {
  return ctx.db.transaction(async (tx) => {
    const r = await closeReservation(tx, reservationId, 'released', ctx.now());
    if (!r) return false;
    await adjustCounters(tx, r.counters.map((c) => ({ ...c, used: 0, reserved: -r.amount })));
    return true;
  });
}

/** Releases reservations past their time; safe to run on every instance at once (SKIP LOCKED). */
export async function sweepReservations(ctx: Pick<Ctx, 'db' | 'now'>): Promise<number> {
  const now = ctx.now();
  return ctx.db.transaction(async (tx) => {
    const stale = await expiredReservations(tx, now);
    for (const r of stale) {
      await closeReservation(tx, r.id, 'released', now);
      await adjustCounters(tx, r.counters.map((c) => ({ ...c, used: 0, reserved: -r.amount })));
    }
    return stale.length;
  });
}
