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

export async function readCounters(q: Queryable, keys: readonly CounterKey[]): Promise<Map<string, CounterRow>> {
  const out = new Map<string, CounterRow>();
  if (!keys.length) return out;
  const r = await q.query<CounterRow>(
    `SELECT c.scope, c.subject, c.metric, c.period, c.period_start, c.used, c.reserved
       FROM usage_counters c
       JOIN unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[]) AS k(scope, subject, metric, period, period_start)
         ON c.scope = k.scope AND c.subject = k.subject AND c.metric = k.metric AND c.period = k.period AND c.period_start = k.period_start`,
    [
      keys.map((k) => k.scope),
      keys.map((k) => k.subject),
      keys.map((k) => k.metric),
      keys.map((k) => k.period),
      keys.map((k) => k.period_start),
    ],
  );
  for (const row of r.rows) out.set(counterId(row), row);
  return out;
}
