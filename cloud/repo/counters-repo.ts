import type { Queryable } from '../db/db.ts';
import { counterId, type CounterKey } from '../domain/usage-rules.ts';

export interface CounterDelta extends CounterKey {
  amount: number;
  /** the limit this counter must stay within, or null when none applies */
  limit: number | null;
}

export interface CounterRow extends CounterKey {
  used: number;
  reserved: number;
}

/** Sums deltas per counter, so one statement never touches a row twice; sorted, so concurrent writers lock rows in one order. */
export function mergeDeltas(deltas: readonly CounterDelta[]): CounterDelta[] {
  const byId = new Map<string, CounterDelta>();
  for (const d of deltas) {
    const id = counterId(d);
    const prev = byId.get(id);
    byId.set(id, prev ? { ...prev, amount: prev.amount + d.amount } : { ...d });
  }
  return [...byId.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, d]) => d);
}

/**
 * Adds the deltas to `used` (an AI hold's `reserved` is gatehouse_hold's, in
 * the database). Counters under a limit move only while used + reserved +
 * amount stays within it, checked by the UPDATE itself, so instances racing on
 * one database cannot overshoot. Answers the first counter that would
 * overshoot (the caller rolls back), or null when all moved.
 */
export async function addToCounters(q: Queryable, deltas: readonly CounterDelta[]): Promise<CounterDelta | null> {
  const merged = mergeDeltas(deltas).filter((d) => d.amount !== 0);
  const free = merged.filter((d) => d.limit === null);
  for (const d of merged) {
    if (d.limit === null) continue;
    if (d.amount > d.limit) return d;
    const r = await q.query(
      `INSERT INTO usage_counters (scope, subject, metric, period, period_start, used) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (scope, subject, metric, period, period_start)
       DO UPDATE SET used = usage_counters.used + EXCLUDED.used
       WHERE usage_counters.used + usage_counters.reserved + EXCLUDED.used <= $7
       RETURNING 1`,
      [d.scope, d.subject, d.metric, d.period, d.period_start, d.amount, d.limit],
    );
    if (r.rows.length === 0) return d;
  }
  if (free.length) {
    await q.query(
      `INSERT INTO usage_counters (scope, subject, metric, period, period_start, used)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::bigint[])
       ON CONFLICT (scope, subject, metric, period, period_start) DO UPDATE SET used = usage_counters.used + EXCLUDED.used`,
      [free.map((d) => d.scope), free.map((d) => d.subject), free.map((d) => d.metric), free.map((d) => d.period), free.map((d) => d.period_start), free.map((d) => d.amount)],
    );
  }
  return null;
}

/** Moves amounts without any limit check (settling and releasing reservations): amounts may be negative. */
export async function adjustCounters(q: Queryable, deltas: ReadonlyArray<CounterKey & { used: number; reserved: number }>): Promise<void> {
  const sorted = [...deltas].sort((a, b) => (counterId(a) < counterId(b) ? -1 : 1));
  for (const d of sorted) {
    await q.query(
      `INSERT INTO usage_counters (scope, subject, metric, period, period_start, used, reserved) VALUES ($1, $2, $3, $4, $5, GREATEST($6::bigint, 0), GREATEST($7::bigint, 0))
       ON CONFLICT (scope, subject, metric, period, period_start)
       DO UPDATE SET used = GREATEST(usage_counters.used + $6::bigint, 0), reserved = GREATEST(usage_counters.reserved + $7::bigint, 0)`,
      [d.scope, d.subject, d.metric, d.period, d.period_start, d.used, d.reserved],
    );
  }
}

export async function readCounters(q: Queryable, keys: readonly CounterKey[]): Promise<Map<string, CounterRow>> {
  const out = new Map<string, CounterRow>();
  if (!keys.length) return out;
  const r = await q.query<CounterRow>(
    `SELECT c.scope, c.subject, c.metric, c.period, c.period_start, c.used, c.reserved
       FROM usage_counters c
       JOIN unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[]) AS k(scope, subject, metric, period, period_start)
         ON c.scope = k.scope AND c.subject = k.subject AND c.metric = k.metric AND c.period = k.period AND c.period_start = k.period_start`,
    [keys.map((k) => k.scope), keys.map((k) => k.subject), keys.map((k) => k.metric), keys.map((k) => k.period), keys.map((k) => k.period_start)],
  );
  for (const row of r.rows) out.set(counterId(row), row);
  return out;
}
