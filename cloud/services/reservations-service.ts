import { randomUUID } from 'node:crypto';
import { unitsMetricOf, type CloudUsageEvent, type Metric } from '../../main/contract/cloud/index.ts';
import { secondsUntil } from '../domain/periods.ts';
import { contributionsOf, counterId, countersFor, type CounterKey } from '../domain/usage-rules.ts';
import { CloudError } from '../errors.ts';
import { mergeDeltas, type CounterDelta } from '../repo/counters-repo.ts';
import { expiredReservations, pruneClosedReservations } from '../repo/reservations-repo.ts';
import { queryRetried, sqlState } from '../db/db.ts';
import type { DeferredNonce, SiteRow } from '../repo/sites-repo.ts';
import type { Ctx } from './context.ts';
import { nonceParams, replayError } from './auth-service.ts';
import { limitMap, quotaDetails, scopesOf } from './usage-service.ts';
import { recordUsageEvents } from '../metrics.ts';

/**
 * Reservation and settlement, for metrics known only afterwards (AI tokens,
 * ai/generate): reserve an upper bound against every limit before
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
 * does not fit changes nothing and is quota_exceeded. With a deferred
 * `nonce` (ai/generate), the same statement claims the request's nonce: one
 * commit for authentication and the hold.
 */
export async function reserve(
  ctx: Ctx,
  site: SiteRow,
  metric: Metric,
  amount: number,
  ttlMs = RESERVATION_TTL_MS,
  nonce?: DeferredNonce,
): Promise<Reservation> {
  if (!Number.isSafeInteger(amount) || amount < 0)
    throw new CloudError('invalid_request', 'a reservation amount is a whole number of units');
  const now = ctx.now();
  const id = `rsv_${randomUUID()}`;
  const expires = new Date(now.getTime() + ttlMs).toISOString();
  const limits = await limitMap(ctx.db, site, now, ctx.cache);
  const deltas = mergeDeltas(
    countersFor(scopesOf(site), [{ metric, amount }], now).map((c) => ({
      ...c,
      limit: limits.get(`${c.scope}|${c.subject}|${c.metric}|${c.period}`) ?? null,
    })),
  );
  const refuse = async (over: CounterDelta) => {
    const quota = await quotaDetails(ctx.db, over);
    return new CloudError(
      'quota_exceeded',
      `the ${quota.period === 'day' ? 'daily' : 'monthly'} ${quota.metric} limit of the ${quota.scope} (${quota.limit}) has no room for ${amount} more; it resets at ${quota.reset_at}`,
      { ...quota },
      { retryAfter: secondsUntil(new Date(quota.reset_at), now) },
    );
  };
  const tooBig = deltas.find((d) => d.limit !== null && amount > d.limit);
  if (tooBig) throw await refuse(tooBig);
  const claim = nonce && !nonce.claimed ? nonce : null;
  try {
    await queryRetried(ctx.db, 'SELECT gatehouse_hold($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10)', [
      id,
      site.id,
      metric,
      amount,
      JSON.stringify(deltas),
      expires,
      now,
      ...nonceParams(claim),
    ]);
  } catch (e) {
    if (sqlState(e) === QUOTA_SQLSTATE) throw await refuse(deltas[Number((e as { detail?: string }).detail)]!);
    throw replayError(e);
  }
  if (claim) claim.claimed = true;
  return {
    id,
    metric,
    amount,
    expires_at: expires,
    counters: deltas.map(({ scope, subject, metric: m, period, period_start }) => ({
      scope,
      subject,
      metric: m,
      period,
      period_start,
    })),
  };
}

/** What gatehouse_hold raises when a counter has no room. */
const QUOTA_SQLSTATE = 'GH001';

export interface SettleOptions {
  /** the most that is counted against the limits (the hold: a provider that answered more than it was allowed overshoots no limit) */
  cap?: number;
  /** kept for the operator when the provider reported more than it was allowed */
  overshoot?: {
    provider: string;
    allowed_output: number;
    reported_output: number;
    held: number;
    reported_total: number;
  };
}

/**
 * Settles a reservation with the event that records the actual use, in one
 * atomic statement (gatehouse_settle, counters locked first): the held amount
 * leaves its counters, and the event is stored as reported and counted like
 * any recorded event (without a limit check: the work is done, and the hold
 * was its upper bound; at most `cap` of its tokens count). Settling twice does
 * nothing and answers false. A reservation the sweeper released already (the
 * work outlived its time) still gets its event: the work was done and is
 * counted once.
 */
export async function settle(
  ctx: Ctx,
  site: SiteRow,
  r: Pick<Reservation, 'id' | 'amount' | 'counters'>,
  event: CloudUsageEvent,
  opts: SettleOptions = {},
): Promise<boolean> {
  const now = ctx.now();
  const byId = new Map<string, CounterKey & { used: number; reserved: number }>();
  for (const c of r.counters) byId.set(counterId(c), { ...c, used: 0, reserved: r.amount });
  for (const c of countersFor(scopesOf(site), contributionsOf(event), new Date(event.timestamp))) {
    const prev = byId.get(counterId(c));
    const amount = c.metric === 'ai_tokens' && opts.cap !== undefined ? Math.min(c.amount, opts.cap) : c.amount;
    byId.set(counterId(c), {
      scope: c.scope,
      subject: c.subject,
      metric: c.metric,
      period: c.period,
      period_start: c.period_start,
      used: (prev?.used ?? 0) + amount,
      reserved: prev?.reserved ?? 0,
    });
  }
  const deltas = [...byId.values()];
  const out = await queryRetried<{ outcome: string }>(
    ctx.db,
    'SELECT gatehouse_settle($1, $2, $3::jsonb, $4::jsonb, $5, $6::jsonb) AS outcome',
    [
      r.id,
      site.id,
      JSON.stringify({ ...event, units_metric: unitsMetricOf(event.event) }),
      JSON.stringify(deltas),
      now,
      opts.overshoot ? JSON.stringify(opts.overshoot) : null,
    ],
  );
  const outcome = out.rows[0]?.outcome;
  if (outcome === 'late')
    ctx.log.warn('a reservation was settled after it timed out: usage recorded without its hold', {
      site_id: site.id,
      reservation_id: r.id,
    });
  return outcome === 'settled' || outcome === 'late';
}

/** Retries of a settlement the database refused (it went away): the provider's answer is recorded once it is back. */
export const SETTLE_RETRY = { firstMs: 500, maxMs: 30_000, forMs: 15 * 60_000 };

/** A settlement waiting for its next try; kick() tries now (once, however often it is called meanwhile). */
interface PendingSettle {
  kick(): Promise<void>;
}
/** Each service's settlements waiting for the database: flushed once when it stops (flushSettles). */
const pendingSettles = new WeakMap<object, { closing: boolean; all: Set<PendingSettle> }>();

function pendingOf(ctx: object) {
  let p = pendingSettles.get(ctx);
  if (!p) pendingSettles.set(ctx, (p = { closing: false, all: new Set() }));
  return p;
}

/**
 * Settles; when the database refuses (it went away), logs it and tries again
 * in the background until it takes it (the event id is fixed, so it is
 * recorded once; a hold the sweeper released meanwhile settles late). Never
 * throws: the provider's answer goes to the site whatever the ledger says.
 * A service that stops tries each waiting settlement once more
 * (flushSettles); what still fails is logged as an error with its tokens,
 * never dropped silently.
 */
export async function settleDurably(
  ctx: Ctx,
  site: SiteRow,
  r: Pick<Reservation, 'id' | 'amount' | 'counters'>,
  event: CloudUsageEvent,
  opts: SettleOptions = {},
): Promise<void> {
  const until = Date.now() + SETTLE_RETRY.forMs;
  let wait = SETTLE_RETRY.firstMs;
  const fields = { site_id: site.id, reservation_id: r.id, event_id: event.event_id };
  const attempt = async (): Promise<boolean> => {
    try {
      if (await settle(ctx, site, r, event, opts)) recordUsageEvents(1);
      return true;
    } catch (e) {
      ctx.log.warn('could not settle an AI generation yet: trying again', {
        ...fields,
        error: e instanceof Error ? e.message : String(e),
      });
      return false;
    }
  };
  if (await attempt()) return;
  const pending = pendingOf(ctx);
  const giveUp = (why: string) =>
    ctx.log.error(`gave up settling an AI generation (${why}): its usage is not recorded`, {
      ...fields,
      tokens_input: event.tokens_input,
      tokens_output: event.tokens_output,
    });
  if (pending.closing) return void giveUp('the service is stopping');
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  const step = async (): Promise<void> => {
    const ok = await attempt();
    running = null;
    if (!ok && !pending.closing && Date.now() <= until) {
      wait = Math.min(wait * 2, SETTLE_RETRY.maxMs);
      return schedule();
    }
    pending.all.delete(entry);
    if (!ok) giveUp(pending.closing ? 'the service stopped' : 'the database stayed away');
  };
  const entry: PendingSettle = {
    kick: () => {
      clearTimeout(timer);
      return (running ??= step());
    },
  };
  const schedule = (): void => {
    timer = setTimeout(() => void entry.kick(), wait);
    timer.unref();
  };
  pending.all.add(entry);
  schedule();
}

/** On stop, before the database closes: every settlement still waiting is tried once more, and given up (logged) if it fails. */
export async function flushSettles(ctx: object): Promise<void> {
  const p = pendingOf(ctx);
  p.closing = true;
  await Promise.all([...p.all].map((e) => e.kick()));
}

/** Gives a hold back (gatehouse_release: counters locked first, then the reservation); false when it was closed already. */
export async function release(ctx: Pick<Ctx, 'db' | 'now'>, reservationId: string): Promise<boolean> {
  const r = await queryRetried<{ released: boolean }>(ctx.db, 'SELECT gatehouse_release($1, $2) AS released', [
    reservationId,
    ctx.now(),
  ]);
  return r.rows[0]?.released === true;
}

/**
 * Releases reservations past their time, and forgets those closed more than a
 * day ago (one row per AI hop would otherwise pile up for ever). Each release
 * is its own statement (one transaction holding several reservations'
 * counters would lock them out of order); safe on every instance at once: a
 * reservation is released once.
 */
export async function sweepReservations(ctx: Pick<Ctx, 'db' | 'now'>): Promise<number> {
  const now = ctx.now();
  await pruneClosedReservations(ctx.db, new Date(now.getTime() - CLOSED_RESERVATION_KEEP_MS));
  let n = 0;
  for (const id of await expiredReservations(ctx.db, now)) if (await release(ctx, id)) n++;
  return n;
}
