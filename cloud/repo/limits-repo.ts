import type { Metric, Period, Scope } from '../../main/contract/cloud/index.ts';
import type { Queryable } from '../db/db.ts';
import type { OperatorLimit, SetBy } from '../domain/limits.ts';
import type { Subject } from '../domain/usage-rules.ts';

/** A limit set by the operator (`limits set`) or by the account itself (`enterprise/limits`); one of each may exist per counter. */
export async function setLimit(q: Queryable, l: OperatorLimit, now: Date): Promise<void> {
  await q.query(
    `INSERT INTO usage_limits (scope, subject, metric, period, limit_value, updated_at, set_by) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (scope, subject, metric, period, set_by) DO UPDATE SET limit_value = EXCLUDED.limit_value, updated_at = EXCLUDED.updated_at`,
    [l.scope, l.subject, l.metric, l.period, l.limit, now, l.set_by ?? 'operator'],
  );
}

export async function removeLimit(
  q: Queryable,
  l: { scope: Scope; subject: string; metric: Metric; period: Period; set_by?: SetBy },
): Promise<boolean> {
  return (
    (
      await q.query(
        'DELETE FROM usage_limits WHERE scope = $1 AND subject = $2 AND metric = $3 AND period = $4 AND set_by = $5',
        [l.scope, l.subject, l.metric, l.period, l.set_by ?? 'operator'],
      )
    ).rowCount > 0
  );
}

export async function limitsFor(q: Queryable, subjects: readonly Subject[]): Promise<OperatorLimit[]> {
  const r = await q.query<OperatorLimit>(
    `SELECT l.scope, l.subject, l.metric, l.period, l.limit_value AS "limit", l.set_by
       FROM usage_limits l JOIN unnest($1::text[], $2::text[]) AS s(scope, subject) ON l.scope = s.scope AND l.subject = s.subject`,
    [subjects.map((s) => s.scope), subjects.map((s) => s.subject)],
  );
  return r.rows;
}

export async function listLimits(q: Queryable): Promise<Array<OperatorLimit & { updated_at: string }>> {
  return (
    await q.query<OperatorLimit & { updated_at: string }>(
      'SELECT scope, subject, metric, period, limit_value AS "limit", set_by, updated_at FROM usage_limits ORDER BY scope, subject, metric, period, set_by',
    )
  ).rows;
}

/** Every limit on an account's scopes: the account, its departments and projects (`<account>/...`), and its sites. */
export async function accountLimits(
  q: Queryable,
  accountId: string,
): Promise<Array<OperatorLimit & { set_by: SetBy }>> {
  return (
    await q.query<OperatorLimit & { set_by: SetBy }>(
      `SELECT l.scope, l.subject, l.metric, l.period, l.limit_value AS "limit", l.set_by FROM usage_limits l
        WHERE (l.scope = 'account' AND l.subject = $1)
           OR (l.scope IN ('department', 'project') AND starts_with(l.subject, $1 || '/'))
           OR (l.scope = 'site' AND l.subject IN (SELECT id FROM sites WHERE account_id = $1))
        ORDER BY l.scope, l.subject, l.metric, l.period, l.set_by`,
      [accountId],
    )
  ).rows;
}

/** How many limits the account set itself on its scopes (what `enterprise/limits` may add to is bounded by this). */
export async function countAccountSetLimits(q: Queryable, accountId: string): Promise<number> {
  return (
    await q.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM usage_limits l
        WHERE l.set_by = 'account'
          AND ((l.scope = 'account' AND l.subject = $1)
            OR (l.scope IN ('department', 'project') AND starts_with(l.subject, $1 || '/'))
            OR (l.scope = 'site' AND l.subject IN (SELECT id FROM sites WHERE account_id = $1)))`,
      [accountId],
    )
  ).rows[0]!.n;
}

export async function limitExists(
  q: Queryable,
  l: { scope: Scope; subject: string; metric: Metric; period: Period; set_by: SetBy },
): Promise<boolean> {
  return (
    (
      await q.query(
        'SELECT 1 FROM usage_limits WHERE scope = $1 AND subject = $2 AND metric = $3 AND period = $4 AND set_by = $5',
        [l.scope, l.subject, l.metric, l.period, l.set_by],
      )
    ).rows.length > 0
  );
}
