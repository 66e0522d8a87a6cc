import { UsageBatchBody, type CloudUsageEvent, type LimitState, type QuotaDetails, type UsageRecordAnswer, type UsageRecordResult } from '../../main/contract/cloud/index.ts';
import type { Queryable } from '../db/db.ts';
import { describeZod } from '../domain/describe-zod.ts';
import type { EffectiveLimit } from '../domain/limits.ts';
import { periodReset, periodStart, secondsUntil } from '../domain/periods.ts';
import { checkEvent, contributionsOf, counterId, countersFor, type CounterKey, type SiteScopes } from '../domain/usage-rules.ts';
import { CloudError } from '../errors.ts';
import { addToCounters, readCounters, type CounterDelta } from '../repo/counters-repo.ts';
import { claimIdempotencyKey, insertEvents, storeIdempotentAnswer } from '../repo/events-repo.ts';
import type { SiteRow } from '../repo/sites-repo.ts';
import type { Ctx } from './context.ts';
import type { ConfigCache } from './config-cache.ts';
import { loadGrants, siteLimits } from './grants-service.ts';

export const scopesOf = (s: SiteRow): SiteScopes => ({ site_id: s.id, account_id: s.account_id, department: s.department, project: s.project });

const limitKey = (l: { scope: string; subject: string; metric: string; period: string }) => `${l.scope}|${l.subject}|${l.metric}|${l.period}`;

/** Counter deltas of one event, each with the limit it must stay within. */
export function deltasFor(scopes: SiteScopes, e: CloudUsageEvent, limits: ReadonlyMap<string, number>): CounterDelta[] {
  return countersFor(scopes, contributionsOf(e), new Date(e.timestamp)).map((c) => ({ ...c, limit: limits.get(limitKey(c)) ?? null }));
}

export async function quotaDetails(q: Queryable, d: CounterDelta): Promise<QuotaDetails> {
  const row = (await readCounters(q, [d])).get(counterId(d));
  return { scope: d.scope, subject: d.subject, metric: d.metric, period: d.period, limit: d.limit ?? 0, used: (row?.used ?? 0) + (row?.reserved ?? 0), reset_at: periodReset(d.period, new Date(d.period_start)).toISOString() };
}

export interface RecordInput {
  body: unknown;
  idempotencyKey: string;
  /** sha-256 of the raw body: the same key with another body is refused */
  bodyHash: string;
}

export interface RecordOutput {
  answer: UsageRecordAnswer;
  replayed: boolean;
}

/**
 * usage/record. One transaction: claim the Idempotency-Key, insert the new
 * events (the primary key drops the ones already stored), move the counters
 * with their limit checks. When the batch as a whole would overshoot a limit,
 * it goes again event by event (savepoints), accepting events in order while
 * they fit. A single event that is refused fails the call with its error.
 */
export async function recordUsage(ctx: Ctx, site: SiteRow, input: RecordInput): Promise<RecordOutput> {
  const now = ctx.now();
  const body = input.body;
  const batch = !!body && typeof body === 'object' && !Array.isArray(body) && Object.hasOwn(body, 'events');
  let raws: unknown[];
  if (batch) {
    const parsed = UsageBatchBody.safeParse(body);
    if (!parsed.success) throw new CloudError('invalid_request', `usage/record takes one event or {events: [...]} with 1 to 100 events: ${describeZod(parsed.error)}`);
    raws = parsed.data.events;
  } else {
    raws = [body];
  }
  const results: UsageRecordResult[] = new Array(raws.length);
  const valid: Array<{ i: number; e: CloudUsageEvent }> = [];
  const seen = new Set<string>();
  raws.forEach((raw, i) => {
    const c = checkEvent(raw, site.id, now);
    if (!c.ok) results[i] = c.result;
    else if (seen.has(c.event.event_id)) results[i] = { event_id: c.event.event_id, status: 'duplicate' };
    else {
      seen.add(c.event.event_id);
      valid.push({ i, e: c.event });
    }
  });
  if (!batch && results[0]?.status === 'rejected') throw new CloudError('invalid_request', `the event is not valid: ${results[0].message}`, { reason: results[0].reason });

  return ctx.db.transaction(async (tx) => {
    const prior = await claimIdempotencyKey(tx, site.id, input.idempotencyKey, input.bodyHash, now);
    if (prior) {
      if (prior.body_hash !== input.bodyHash) throw new CloudError('conflict', 'this Idempotency-Key was already used with a different body: use a new key for a new request');
      return { answer: prior.answer as UsageRecordAnswer, replayed: true };
    }
    const limits = await limitMap(tx, site, now, ctx.cache);
    const scopes = scopesOf(site);
    await tx.query('SAVEPOINT batch');
    const inserted = await insertEvents(tx, site.id, [...valid].sort((a, b) => (a.e.event_id < b.e.event_id ? -1 : 1)).map((v) => v.e), now);
    const over = await addToCounters(tx, valid.filter((v) => inserted.has(v.e.event_id)).flatMap((v) => deltasFor(scopes, v.e, limits)));
    if (!over) {
      await tx.query('RELEASE SAVEPOINT batch');
      for (const v of valid) results[v.i] = { event_id: v.e.event_id, status: inserted.has(v.e.event_id) ? 'accepted' : 'duplicate' };
    } else {
      await tx.query('ROLLBACK TO SAVEPOINT batch');
      for (const v of valid) results[v.i] = await recordOne(tx, site.id, scopes, v.e, limits, now);
      if (!batch && results[0]!.status === 'rejected') {
        const quota = results[0]!.quota!;
        throw new CloudError('quota_exceeded', `the ${quota.period === "day" ? "daily" : "monthly"} ${quota.metric} limit of the ${quota.scope} (${quota.limit}) is reached; it resets at ${quota.reset_at}`, { ...quota }, { retryAfter: secondsUntil(new Date(quota.reset_at), now) });
      }
    }
    const answer: UsageRecordAnswer = {
      success: true,
      results,
      accepted: results.filter((r) => r.status === 'accepted').length,
      duplicate: results.filter((r) => r.status === 'duplicate').length,
      rejected: results.filter((r) => r.status === 'rejected').length,
    };
    await storeIdempotentAnswer(tx, site.id, input.idempotencyKey, 200, answer);
    return { answer, replayed: false };
  });
}

async function recordOne(tx: Queryable, siteId: string, scopes: SiteScopes, e: CloudUsageEvent, limits: ReadonlyMap<string, number>, now: Date): Promise<UsageRecordResult> {
  await tx.query('SAVEPOINT one');
  const inserted = await insertEvents(tx, siteId, [e], now);
  if (!inserted.size) {
    await tx.query('RELEASE SAVEPOINT one');
    return { event_id: e.event_id, status: 'duplicate' };
  }
  const over = await addToCounters(tx, deltasFor(scopes, e, limits));
  if (!over) {
    await tx.query('RELEASE SAVEPOINT one');
    return { event_id: e.event_id, status: 'accepted' };
  }
  await tx.query('ROLLBACK TO SAVEPOINT one');
  const quota = await quotaDetails(tx, over);
  return { event_id: e.event_id, status: 'rejected', reason: 'quota_exceeded', message: `the ${quota.period === "day" ? "daily" : "monthly"} ${quota.metric} limit of the ${quota.scope} is reached`, quota };
}

export async function limitMap(q: Queryable, site: SiteRow, now: Date, cache?: ConfigCache): Promise<Map<string, number>> {
  const g = await loadGrants(q, site, now);
  const out = new Map<string, number>();
  // Two limits on one counter (the operator's and the account's): the tighter holds.
  for (const l of await siteLimits(q, g, cache)) out.set(limitKey(l), Math.min(l.limit, out.get(limitKey(l)) ?? Infinity));
  return out;
}

/** The site's limits with their use in the current periods. */
export async function limitStates(q: Queryable, limits: readonly EffectiveLimit[], now: Date): Promise<LimitState[]> {
  const keys: CounterKey[] = limits.map((l) => ({ scope: l.scope, subject: l.subject, metric: l.metric, period: l.period, period_start: periodStart(l.period, now).toISOString() }));
  const rows = await readCounters(q, keys);
  return limits.map((l, i) => {
    const c = rows.get(counterId(keys[i]!));
    const used = c?.used ?? 0;
    const reserved = c?.reserved ?? 0;
    return { scope: l.scope, subject: l.subject, metric: l.metric, period: l.period, limit: l.limit, used, reserved, remaining: Math.max(0, l.limit - used - reserved), period_start: keys[i]!.period_start, reset_at: periodReset(l.period, now).toISOString(), source: l.source };
  });
}
