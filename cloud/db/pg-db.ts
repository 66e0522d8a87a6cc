import pg from 'pg';
import { PARSERS, RETRYABLE_SQLSTATES, TRANSACTION_ATTEMPTS, sqlState, type Db, type Queryable, type QueryResult } from './db.ts';

/**
 * A PostgreSQL server through node-postgres: a small pool, our type parsers
 * per pool (not node-postgres's process-wide registry), and a retried
 * READ COMMITTED transaction helper.
 */
export function openPostgres(url: string, opts: { max?: number; applicationName?: string } = {}): Db {
  const types = {
    getTypeParser(oid: number, format?: string) {
      const p = PARSERS[oid];
      return p && format !== 'binary' ? p : pg.types.getTypeParser(oid, format as 'text');
    },
  };
  const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 10, application_name: opts.applicationName ?? 'gatehouse-cloud', types: types as pg.CustomTypesConfig });
  // An idle client losing its server connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // Parameterised statements are named after their text, so each connection parses and plans one once.
  const names = new Map<string, string>();
  const nameOf = (sql: string) => {
    let n = names.get(sql);
    if (!n) names.set(sql, (n = `gh${names.size}`));
    return n;
  };
  const run = async <T>(q: pg.Pool | pg.PoolClient, sql: string, params: readonly unknown[] = []): Promise<QueryResult<T>> => {
    const r = params.length ? await q.query({ name: nameOf(sql), text: sql, values: params as unknown[] }) : await q.query(sql);
    return { rows: r.rows as T[], rowCount: r.rowCount ?? r.rows.length };
  };
  return {
    kind: 'postgres',
    query: (sql, params) => run(pool, sql, params),
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        const client = await pool.connect();
        let broken = false;
        try {
          await client.query('BEGIN');
          const out = await fn({ query: (sql, params) => run(client, sql, params) });
          await client.query('COMMIT');
          return out;
        } catch (e) {
          try {
            await client.query('ROLLBACK');
          } catch {
            broken = true;
          }
          if (attempt >= TRANSACTION_ATTEMPTS || !RETRYABLE_SQLSTATES.has(sqlState(e) ?? '')) throw e;
        } finally {
          client.release(broken);
        }
      }
    },
    async exec(sql: string): Promise<void> {
      await pool.query(sql);
    },
    close: () => pool.end(),
  };
}
