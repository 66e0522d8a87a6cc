import {
  UsageBatchBody,
  unitsMetricOf,
  type CloudUsageEvent,
  type LimitState,
  type QuotaDetails,
  type UsageRecordAnswer,
  type UsageRecordResult,
} from '../../main/contract/cloud/index.ts';
import { queryRetried, type Queryable } from '../db/db.ts';
import { describeZod } from '../domain/describe-zod.ts';
import type { EffectiveLimit } from '../domain/limits.ts';
import { periodReset, periodStart, secondsUntil } from '../domain/periods.ts';
import {
  checkEvent,
  contributionsOf,
  counterId,
  countersFor,
  type CounterKey,
  type SiteScopes,
} from '../domain/usage-rules.ts';
import { CloudError } from '../errors.ts';
import { readCounters, type CounterDelta } from '../repo/counters-repo.ts';
import type { SiteRow } from '../repo/sites-repo.ts';
import type { Ctx } from './context.ts';
import type { ConfigCache } from './config-cache.ts';
import { loadGrants, siteLimits } from './grants-service.ts';
import { nonceParams, replayError } from './auth-service.ts';

export const scopesOf = (s: SiteRow): SiteScopes => ({
  site_id: s.id,
  account_id: s.account_id,
  department: s.department,
  project: s.project,
});

const limitKey = (l: { scope: string; subject: string; metric: string; period: string }) =>
  `${l.scope}|${l.subject}|${l.metric}|${l.period}`;

/** Counter deltas of one event, each with the limit it must stay within. */
export function deltasFor(scopes: SiteScopes, e: CloudUsageEvent, limits: ReadonlyMap<string, number>): CounterDelta[] {
  return countersFor(scopes, contributionsOf(e), new Date(e.timestamp)).map((c) => ({
    ...c,
    limit: limits.get(limitKey(c)) ?? null,
  }));
}

export async function quotaDetails(q: Queryable, d: CounterDelta): Promise<QuotaDetails> {
  const row = (await readCounters(q, [d])).get(counterId(d));
  return {
    scope: d.scope,
    subject: d.subject,
    metric: d.metric,
    period: d.period,
    limit: d.limit ?? 0,
    used: (row?.used ?? 0) + (row?.reserved ?? 0),
    reset_at: periodReset(d.period, new Date(d.period_start)).toISOString(),
  };
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
 * usage/record in one statement (gatehouse_record): claim the request's
 * nonce and the Idempotency-Key, lock the counters in the one order, accept
 * events in request order while each fits every limit (an event stored
 * already is a duplicate), insert them (the rollups follow in the same
 * statement) and move the counters, and keep the answer with the key. A
 * single event that is refused fails the call with its error.
 */
export async function recordUsage(ctx: Ctx, site: SiteRow, input: RecordInput): Promise<RecordOutput> {
  const now = ctx.now();
  const body = input.body;
  const batch = !!body && typeof body === 'object' && !Array.isArray(body) && Object.hasOwn(body, 'events');
  let raws: unknown[];
  if (batch) {
    const parsed = UsageBatchBody.safeParse(body);
    if (!parsed.success)
      throw new CloudError(
        'invalid_request',
        `usage/record takes one event or {events: [...]} with 1 to 100 events: ${describeZod(parsed.error)}`,
      );
    raws = parsed.data.events;
  } else {
    raws = [body];
  }
  const results: Array<UsageRecordResult | null> = raws.map(() => null);
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
  if (!batch && results[0]?.status === 'rejected')
    throw new CloudError('invalid_request', `the event is not valid: ${results[0].message}`, {
      reason: results[0].reason,
    });

  const limits = await limitMap(ctx.db, site, now, ctx.cache);
  const scopes = scopesOf(site);
  const events = valid.map(({ i, e }) => ({
    i,
    // The time as the counters take it (new Date: UTC, milliseconds), not the text as sent: the database refuses
    // offsets past ±15:59 that RFC 3339 allows, and rounds a finer fraction where Date truncates it (another day at midnight).
    e: { ...e, units_metric: unitsMetricOf(e.event), occurred_at: new Date(e.timestamp).toISOString() },
    deltas: deltasFor(scopes, e, limits).map((d) => ({
      ...d,
      reset_at: periodReset(d.period, new Date(d.period_start)).toISOString(),
    })),
  }));
  const claim = site.nonce && !site.nonce.claimed ? site.nonce : null;
  let out: RecordAnswer;
  try {
    const r = await queryRetried<{ out: RecordAnswer }>(
      ctx.db,
      'SELECT gatehouse_record($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7, $8, $9, $10) AS out',
      [
        site.id,
        input.idempotencyKey,
        input.bodyHash,
        JSON.stringify(results),
        JSON.stringify(events),
        !batch,
        now,
        ...nonceParams(claim),
      ],
    );
    out = r.rows[0]!.out;
  } catch (e) {
    throw replayError(e);
  }
  if (claim) claim.claimed = true;
  if ('prior' in out) {
    if (out.prior.body_hash !== input.bodyHash)
      throw new CloudError(
        'conflict',
        'this Idempotency-Key was already used with a different body: use a new key for a new request',
      );
    return { answer: out.prior.answer, replayed: true };
  }
  if ('refused' in out) {
    const quota = out.refused;
    throw new CloudError(
      'quota_exceeded',
      `the ${quota.period === 'day' ? 'daily' : 'monthly'} ${quota.metric} limit of the ${quota.scope} (${quota.limit}) is reached; it resets at ${quota.reset_at}`,
      { ...quota },
      { retryAfter: secondsUntil(new Date(quota.reset_at), now) },
    );
  }
  return { answer: out.answer, replayed: false };
}

/** What gatehouse_record answers. */
type RecordAnswer =
  | { prior: { body_hash: string; answer: UsageRecordAnswer } }
  | { refused: QuotaDetails }
  | { answer: UsageRecordAnswer };

export async function limitMap(
  q: Queryable,
  site: SiteRow,
  now: Date,
  cache?: ConfigCache,
): Promise<Map<string, number>> {
  const g = await loadGrants(q, site, now);
  const out = new Map<string, number>();
  // Two limits on one counter (the operator's and the account's): the tighter holds.
  for (const l of await siteLimits(q, g, cache))
    out.set(limitKey(l), Math.min(l.limit, out.get(limitKey(l)) ?? Infinity));
  return out;
}

/** The site's limits with their use in the current periods. */
export async function limitStates(q: Queryable, limits: readonly EffectiveLimit[], now: Date): Promise<LimitState[]> {
  const keys: CounterKey[] = limits.map((l) => ({
    scope: l.scope,
    subject: l.subject,
    metric: l.metric,
    period: l.period,
    period_start: periodStart(l.period, now).toISOString(),
  }));
  const rows = await readCounters(q, keys);
  return limits.map((l, i) => {
    const c = rows.get(counterId(keys[i]!));
    const used = c?.used ?? 0;
    const reserved = c?.reserved ?? 0;
    return {
      scope: l.scope,
      subject: l.subject,
      metric: l.metric,
      period: l.period,
      limit: l.limit,
      used,
      reserved,
      remaining: Math.max(0, l.limit - used - reserved),
      period_start: keys[i]!.period_start,
      reset_at: periodReset(l.period, now).toISOString(),
      source: l.source,
    };
  });
}
