import { randomUUID } from 'node:crypto';
import { unitsMetricOf, type CloudUsageEvent, type Metric } from '../../main/contract/cloud/index.ts';
import { secondsUntil } from '../domain/periods.ts';
import { contributionsOf, counterId, countersFor, type CounterKey } from '../domain/usage-rules.ts';
import { CloudError } from '../errors.ts';
import { adjustCounters, mergeDeltas, type CounterDelta } from '../repo/counters-repo.ts';
import { closeReservation, expiredReservations, pruneClosedReservations } from '../repo/reservations-repo.ts';
import { queryRetried, sqlState } from '../db/db.ts';
import type { SiteRow } from '../repo/sites-repo.ts';
import type { Ctx } from './context.ts';
import { limitMap, quotaDetails, scopesOf } from './usage-service.ts';

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
/** Closed reservations are kept this long (a settlement after the sweeper released its hold still finds it), then pruned. */
export const CLOSED_RESERVATION_KEEP_MS = 86_400_000;

export interface Reservation {
  id: string;
  metric: Metric;
  amount: number;
  expires_at: string;
  /** the counters the amount is held on (sorted: the order every writer locks them in) */
  counters: CounterKey[];
}

/**
 * Holds `amount` on every counter the site's use of `metric` goes to, each
 * within its limit, in one atomic statement (gatehouse_hold): a hold that
 * does not fit changes nothing and is quota_exceeded.
 */
export async function reserve(ctx: Ctx, site: SiteRow, metric: Metric, amount: number, ttlMs = RESERVATION_TTL_MS): Promise<Reservation> {
  if (!Number.isSafeInteger(amount) || amount < 0) throw new CloudError('invalid_request', 'a reservation amount is a whole number of units');
  const now = ctx.now();
  const id = `rsv_${randomUUID()}`;
  const expires = new Date(now.getTime() + ttlMs).toISOString();
  const limits = await limitMap(ctx.db, site, now, ctx.cache);
  const deltas = mergeDeltas(countersFor(scopesOf(site), [{ metric, amount }], now).map((c) => ({ ...c, limit: limits.get(`${c.scope}|${c.subject}|${c.metric}|${c.period}`) ?? null })));
  const refuse = async (over: CounterDelta) => {
    const quota = await quotaDetails(ctx.db, over);
    return new CloudError('quota_exceeded', `the ${quota.period === 'day' ? 'daily' : 'monthly'} ${quota.metric} limit of the ${quota.scope} (${quota.limit}) has no room for ${amount} more; it resets at ${quota.reset_at}`, { ...quota }, { retryAfter: secondsUntil(new Date(quota.reset_at), now) });
  };
  const tooBig = deltas.find((d) => d.limit !== null && amount > d.limit);
  if (tooBig) throw await refuse(tooBig);
  try {
    await queryRetried(ctx.db, 'SELECT gatehouse_hold($1, $2, $3, $4, $5::jsonb, $6, $7)', [id, site.id, metric, amount, JSON.stringify(deltas), expires, now]);
  } catch (e) {
    if (sqlState(e) === QUOTA_SQLSTATE) throw await refuse(deltas[Number((e as { detail?: string }).detail)]!);
    throw e;
  }
  return { id, metric, amount, expires_at: expires, counters: deltas.map(({ scope, subject, metric: m, period, period_start }) => ({ scope, subject, metric: m, period, period_start })) };
}

/** What gatehouse_hold raises when a counter has no room. */
const QUOTA_SQLSTATE = 'GH001';

/**
 * Settles a reservation with the event that records the actual use, in one
 * atomic statement (gatehouse_settle): the held amount leaves its counters,
 * and the event is stored and counted like any recorded event (without a
 * limit check: the work is done, and the hold was its upper bound).
 * Settling twice does nothing and answers false. A reservation the sweeper
 * released already (the work outlived its time) still gets its event: the
 * work was done and is counted once.
 */
export async function settle(ctx: Ctx, site: SiteRow, r: Pick<Reservation, 'id' | 'amount' | 'counters'>, event: CloudUsageEvent): Promise<boolean> {
  const now = ctx.now();
  const byId = new Map<string, CounterKey & { used: number; reserved: number }>();
  for (const c of r.counters) byId.set(counterId(c), { ...c, used: 0, reserved: r.amount });
  for (const c of countersFor(scopesOf(site), contributionsOf(event), new Date(event.timestamp))) {
    const prev = byId.get(counterId(c));
    byId.set(counterId(c), { scope: c.scope, subject: c.subject, metric: c.metric, period: c.period, period_start: c.period_start, used: (prev?.used ?? 0) + c.amount, reserved: prev?.reserved ?? 0 });
  }
  const deltas = [...byId.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, d]) => d);
  const out = await queryRetried<{ outcome: string }>(ctx.db, 'SELECT gatehouse_settle($1, $2, $3::jsonb, $4::jsonb, $5) AS outcome', [r.id, site.id, JSON.stringify({ ...event, units_metric: unitsMetricOf(event.event) }), JSON.stringify(deltas), now]);
  const outcome = out.rows[0]?.outcome;
  if (outcome === 'late') ctx.log.warn('a reservation was settled after it timed out: usage recorded without its hold', { site_id: site.id, reservation_id: r.id });
  return outcome === 'settled' || outcome === 'late';
}

export async function release(ctx: Pick<Ctx, 'db' | 'now'>, reservationId: string): Promise<boolean> {
  return ctx.db.transaction(async (tx) => {
    const r = await closeReservation(tx, reservationId, 'released', ctx.now());
    if (!r) return false;
    await adjustCounters(tx, r.counters.map((c) => ({ ...c, used: 0, reserved: -r.amount })));
    return true;
  });
}

/**
 * Releases reservations past their time, and forgets those closed more than a
 * day ago (one row per AI hop would otherwise pile up for ever); safe to run
 * on every instance at once (SKIP LOCKED).
 */
export async function sweepReservations(ctx: Pick<Ctx, 'db' | 'now'>): Promise<number> {
  const now = ctx.now();
  await pruneClosedReservations(ctx.db, new Date(now.getTime() - CLOSED_RESERVATION_KEEP_MS));
  return ctx.db.transaction(async (tx) => {
    const stale = await expiredReservations(tx, now);
    for (const r of stale) {
      await closeReservation(tx, r.id, 'released', now);
      await adjustCounters(tx, r.counters.map((c) => ({ ...c, used: 0, reserved: -r.amount })));
    }
    return stale.length;
  });
}
