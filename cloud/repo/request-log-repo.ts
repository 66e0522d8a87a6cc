import type { Queryable } from '../db/db.ts';

/** One answered request, as the log keeps it: no body, query, header or secret; the endpoint as its route template. */
export interface RequestLogEntry {
  at: string;
  request_id: string;
  account_id: string | null;
  site_id: string | null;
  auth: 'none' | 'site' | 'account' | 'token';
  endpoint: string;
  method: string;
  status: number;
  code: string | null;
  ms: number;
}

export async function insertLogEntries(q: Queryable, entries: readonly RequestLogEntry[]): Promise<void> {
  if (!entries.length) return;
  const col = <K extends keyof RequestLogEntry>(k: K) => entries.map((e) => e[k]);
  await q.query(
    `INSERT INTO request_log (at, request_id, account_id, site_id, auth, endpoint, method, status, code, ms)
     SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::text[], $10::real[])`,
    [
      col('at'),
      col('request_id'),
      col('account_id'),
      col('site_id'),
      col('auth'),
      col('endpoint'),
      col('method'),
      col('status'),
      col('code'),
      col('ms'),
    ],
  );
}

export interface LogFilter {
  account_id: string;
  site?: string;
  endpoint?: string;
  /** [lowest, highest] status */
  status?: [number, number];
  from?: Date;
  to?: Date;
  /** rows after this id */
  after: number;
  limit: number;
}

export type LogRow = Omit<RequestLogEntry, 'account_id'> & { id: number };

/** An account's requests, oldest first from a keyset cursor (the id), filtered. */
export async function accountLog(q: Queryable, f: LogFilter): Promise<LogRow[]> {
  const r = await q.query<LogRow>(
    `SELECT id, at, request_id, site_id, auth, endpoint, method, status, code, ms FROM request_log
      WHERE account_id = $1 AND id > $2
        AND ($3::text IS NULL OR site_id = $3) AND ($4::text IS NULL OR endpoint = $4)
        AND ($5::int IS NULL OR status BETWEEN $5 AND $6) AND ($7::timestamptz IS NULL OR at >= $7) AND ($8::timestamptz IS NULL OR at < $8)
      ORDER BY id LIMIT $9`,
    [
      f.account_id,
      f.after,
      f.site ?? null,
      f.endpoint ?? null,
      f.status?.[0] ?? null,
      f.status?.[1] ?? null,
      f.from ?? null,
      f.to ?? null,
      f.limit,
    ],
  );
  return r.rows;
}

/**
 * Retention: rows older than `before`, and the oldest beyond `maxRows` rows, counted as rows: an id distance
 * would count the ids of rows already pruned per account, and a busy account would push out others' rows.
 * The id span bounds the count from above, so the counting scan runs only when the table may be over.
 */
export async function pruneLog(q: Queryable, before: Date, maxRows: number): Promise<number> {
  const old = await q.query('DELETE FROM request_log WHERE at < $1', [before]);
  const span = (
    await q.query<{ lo: number | null; hi: number | null }>('SELECT min(id) AS lo, max(id) AS hi FROM request_log')
  ).rows[0];
  if (!span || span.lo === null || span.hi === null || span.hi - span.lo + 1 <= maxRows) return old.rowCount;
  const over = await q.query(
    'DELETE FROM request_log WHERE id <= (SELECT id FROM request_log ORDER BY id DESC OFFSET $1 LIMIT 1)',
    [maxRows],
  );
  return old.rowCount + over.rowCount;
}

/** One account's rows beyond its newest `keep` (the (account_id, id) index finds the cut). */
export async function pruneAccountLog(q: Queryable, accountId: string, keep: number): Promise<number> {
  return (
    await q.query(
      'DELETE FROM request_log WHERE account_id = $1 AND id <= (SELECT id FROM request_log WHERE account_id = $1 ORDER BY id DESC OFFSET $2 LIMIT 1)',
      [accountId, keep],
    )
  ).rowCount;
}
