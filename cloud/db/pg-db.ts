import pg from 'pg';
import {
  PARSERS,
  RETRYABLE_SQLSTATES,
  TRANSACTION_ATTEMPTS,
  sqlState,
  type Db,
  type Queryable,
  type QueryResult,
} from './db.ts';
import { DatabaseUnavailable, failedConnect, failedStatement } from './db-unavailable.ts';

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export interface PostgresOptions {
  max?: number;
  applicationName?: string;
  /** a connection the server dropped (idle or checked out): for the log and the metrics */
  onConnectionError?: (e: Error) => void;
}

/** How long a request waits for a connection before it is answered 503 (a server that does not answer at all). */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * A PostgreSQL server through node-postgres: a small pool, our type parsers
 * per pool (not node-postgres's process-wide registry), and a retried
 * READ COMMITTED transaction helper. A lost server never crashes the
 * process: every client, idle or checked out, has an 'error' listener (an
 * unhandled one is fatal in Node), and a connection fault surfaces as
 * DatabaseUnavailable (503 gateway_unavailable); the pool opens new
 * connections once the server is back.
 */
export function openPostgres(url: string, opts: PostgresOptions = {}): Db & { poolStats(): PoolStats } {
  const types = {
    getTypeParser(oid: number, format?: string) {
      const p = PARSERS[oid];
      return p && format !== 'binary' ? p : pg.types.getTypeParser(oid, format as 'text');
    },
  };
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'gatehouse-cloud',
    types: types as pg.CustomTypesConfig,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  const lost = (e: Error) => opts.onConnectionError?.(e);
  // The pool listens on idle clients only; a checked-out one whose server goes away between two statements emits
  // 'error' with no listener, which kills the process. Its next statement fails instead, and release(err) drops it.
  pool.on('connect', (client) => client.on('error', lost));
  pool.on('error', lost);
  // Parameterised statements are named after their text, so each connection parses and plans one once.
  const names = new Map<string, string>();
  const nameOf = (sql: string) => {
    let n = names.get(sql);
    if (!n) names.set(sql, (n = `gh${names.size}`));
    return n;
  };
  const run = async <T>(
    q: pg.Pool | pg.PoolClient,
    sql: string,
    params: readonly unknown[] = [],
  ): Promise<QueryResult<T>> => {
    try {
      const r = params.length
        ? await q.query({ name: nameOf(sql), text: sql, values: params as unknown[] })
        : await q.query(sql);
      return { rows: r.rows as T[], rowCount: r.rowCount ?? r.rows.length };
    } catch (e) {
      throw failedStatement(e);
    }
  };
  // The connection is taken apart from the statement, so a failure is judged by what failed: connecting, or the statement.
  const connect = () => pool.connect().catch((e: unknown) => Promise.reject(failedConnect(e)));
  const once = async <T>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>> => {
    const client = await connect();
    let lost = false;
    try {
      return await run<T>(client, sql, params);
    } catch (e) {
      lost = e instanceof DatabaseUnavailable;
      throw e;
    } finally {
      client.release(lost);
    }
  };
  return {
    kind: 'postgres',
    query: (sql, params) => once(sql, params),
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        const client = await connect();
        let broken = false;
        try {
          await run(client, 'BEGIN');
          const out = await fn({ query: (sql, params) => run(client, sql, params) });
          await run(client, 'COMMIT');
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
      await once(sql);
    },
    close: () => pool.end(),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  };
}
