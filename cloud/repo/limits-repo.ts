import type { Metric, Period, Scope } from '../../main/contract/cloud/index.ts';
import type { Queryable } from '../db/db.ts';
import type { OperatorLimit } from '../domain/limits.ts';
import type { Subject } from '../domain/usage-rules.ts';

export async function setLimit(q: Queryable, l: OperatorLimit, now: Date): Promise<void> {
  await q.query(
    `INSERT INTO usage_limits (scope, subject, metric, period, limit_value, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (scope, subject, metric, period) DO UPDATE SET limit_value = EXCLUDED.limit_value, updated_at = EXCLUDED.updated_at`,
    [l.scope, l.subject, l.metric, l.period, l.limit, now],
  );
}

export async function removeLimit(q: Queryable, l: { scope: Scope; subject: string; metric: Metric; period: Period }): Promise<boolean> {
  return (await q.query('DELETE FROM usage_limits WHERE scope = $1 AND subject = $2 AND metric = $3 AND period = $4', [l.scope, l.subject, l.metric, l.period])).rowCount > 0;
}

export async function limitsFor(q: Queryable, subjects: readonly Subject[]): Promise<OperatorLimit[]> {
  const r = await q.query<OperatorLimit>(
    `SELECT l.scope, l.subject, l.metric, l.period, l.limit_value AS "limit"
       FROM usage_limits l JOIN unnest($1::text[], $2::text[]) AS s(scope, subject) ON l.scope = s.scope AND l.subject = s.subject`,
    [subjects.map((s) => s.scope), subjects.map((s) => s.subject)],
  );
  return r.rows;
}

export async function listLimits(q: Queryable): Promise<Array<OperatorLimit & { updated_at: string }>> {
  return (await q.query<OperatorLimit & { updated_at: string }>('SELECT scope, subject, metric, period, limit_value AS "limit", updated_at FROM usage_limits ORDER BY scope, subject, metric, period')).rows;
}
