import type { Queryable } from '../db/db.ts';

/**
 * Cloud tasks (agency reports): queued by a request, run by whichever
 * instance claims them first (`FOR UPDATE SKIP LOCKED`), results kept until
 * `expires_at`. A task whose instance died while running is claimed again
 * once it is stale, at most MAX_ATTEMPTS times.
 */
export const MAX_ATTEMPTS = 3;

export interface TaskRow {
  id: string;
  account_id: string;
  kind: string;
  params: Record<string, unknown>;
  status: 'queued' | 'running' | 'done' | 'failed';
  attempts: number;
  result_rows: number | null;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  expires_at: string;
}

const COLS =
  'id, account_id, kind, params, status, attempts, result_rows, error, created_at, started_at, finished_at, expires_at';

export async function insertTask(
  q: Queryable,
  t: Pick<TaskRow, 'id' | 'account_id' | 'kind' | 'params' | 'created_at' | 'expires_at'>,
): Promise<TaskRow> {
  return (
    await q.query<TaskRow>(
      `INSERT INTO cloud_tasks (id, account_id, kind, params, status, created_at, expires_at) VALUES ($1, $2, $3, $4::jsonb, 'queued', $5, $6) RETURNING ${COLS}`,
      [t.id, t.account_id, t.kind, JSON.stringify(t.params), t.created_at, t.expires_at],
    )
  ).rows[0]!;
}

export async function activeTasks(q: Queryable, accountId: string): Promise<number> {
  return (
    await q.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM cloud_tasks WHERE account_id = $1 AND status IN ('queued', 'running')`,
      [accountId],
    )
  ).rows[0]!.n;
}

/** Claims the oldest runnable task for this instance; null when there is none. */
export async function claimTask(q: Queryable, now: Date, staleBefore: Date): Promise<TaskRow | null> {
  const r = await q.query<TaskRow>(
    `UPDATE cloud_tasks SET status = 'running', started_at = $1, attempts = attempts + 1
      WHERE id = (SELECT id FROM cloud_tasks
                   WHERE (status = 'queued' OR (status = 'running' AND started_at < $2)) AND attempts < $3
                   ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING ${COLS}`,
    [now, staleBefore, MAX_ATTEMPTS],
  );
  return r.rows[0] ?? null;
}

/** Stores the result, only if this claim still holds the task (a stale claim that finishes late changes nothing). */
export async function finishTask(
  q: Queryable,
  t: TaskRow,
  result: { json: unknown; csv: string; rows: number },
  now: Date,
): Promise<boolean> {
  const r = await q.query(
    `UPDATE cloud_tasks SET status = 'done', result = $3::jsonb, result_csv = $4, result_rows = $5, finished_at = $6 WHERE id = $1 AND status = 'running' AND attempts = $2`,
    [t.id, t.attempts, JSON.stringify(result.json), result.csv, result.rows, now],
  );
  return r.rowCount > 0;
}

export async function failTask(q: Queryable, t: TaskRow, error: string, now: Date): Promise<void> {
  await q.query(
    `UPDATE cloud_tasks SET status = 'failed', error = $3, finished_at = $4 WHERE id = $1 AND status = 'running' AND attempts = $2`,
    [t.id, t.attempts, error, now],
  );
}

/** Tasks that ran out of attempts while their instances kept dying. */
export async function failAbandoned(q: Queryable, staleBefore: Date, now: Date): Promise<number> {
  return (
    await q.query(
      `UPDATE cloud_tasks SET status = 'failed', error = 'the task was interrupted too often', finished_at = $2 WHERE status = 'running' AND started_at < $1 AND attempts >= $3`,
      [staleBefore, now, MAX_ATTEMPTS],
    )
  ).rowCount;
}

export async function taskOf(q: Queryable, accountId: string, id: string): Promise<TaskRow | null> {
  return (
    (await q.query<TaskRow>(`SELECT ${COLS} FROM cloud_tasks WHERE account_id = $1 AND id = $2`, [accountId, id]))
      .rows[0] ?? null
  );
}

export async function taskResult(
  q: Queryable,
  accountId: string,
  id: string,
  part: 'result' | 'result_csv',
): Promise<unknown> {
  return (
    (
      await q.query<{ v: unknown }>(
        `SELECT ${part === 'result' ? 'result' : 'result_csv'} AS v FROM cloud_tasks WHERE account_id = $1 AND id = $2 AND status = 'done'`,
        [accountId, id],
      )
    ).rows[0]?.v ?? null
  );
}

export async function listTasks(q: Queryable, accountId: string, limit = 50): Promise<TaskRow[]> {
  return (
    await q.query<TaskRow>(
      `SELECT ${COLS} FROM cloud_tasks WHERE account_id = $1 ORDER BY created_at DESC, id LIMIT $2`,
      [accountId, limit],
    )
  ).rows;
}

export async function pruneTasks(q: Queryable, now: Date): Promise<number> {
  return (await q.query('DELETE FROM cloud_tasks WHERE expires_at < $1', [now])).rowCount;
}

/** Keeps an account's newest `keep` finished tasks and drops the rest. */
export async function pruneFinished(q: Queryable, accountId: string, keep: number): Promise<number> {
  return (
    await q.query(
      `DELETE FROM cloud_tasks WHERE account_id = $1 AND status IN ('done', 'failed')
          AND id NOT IN (SELECT id FROM cloud_tasks WHERE account_id = $1 AND status IN ('done', 'failed') ORDER BY created_at DESC, id LIMIT $2)`,
      [accountId, keep],
    )
  ).rowCount;
}
