/**
 * The storage port: PostgreSQL, reached through one of two adapters (PGlite
 * embedded in the data dir, or node-postgres for a server). Repositories
 * write plain SQL against `Queryable`; both adapters return the same JS
 * types (bigint and numeric as number, timestamptz as an ISO string).
 */
export type Row = Record<string, unknown>;

export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

export interface Queryable {
  query<T = Row>(sql: string, params?: readonly unknown[]): Promise<QueryResult<T>>;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Runs `fn` in one READ COMMITTED transaction: committed when it resolves,
   * rolled back when it throws. Retried (from the start) on a deadlock or a
   * serialization failure, so `fn` must not have effects outside the database.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Several statements at once, no parameters (migrations). */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

/** Type parsers both adapters install, by PostgreSQL type oid. */
export const PARSERS: Record<number, (text: string) => unknown> = {
  20: (v) => Number(v), // int8: our counters stay far below 2^53
  1700: (v) => Number(v), // numeric
  1184: (v) => new Date(v).toISOString(), // timestamptz
  1114: (v) => new Date(`${v}Z`).toISOString(), // timestamp (UTC by convention)
};

/** SQLSTATEs after which a transaction is safe to run again. */
export const RETRYABLE_SQLSTATES = new Set(['40001', '40P01']);
export const TRANSACTION_ATTEMPTS = 4;

export function sqlState(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export const isUniqueViolation = (e: unknown): boolean => sqlState(e) === '23505';

/** One statement (atomic on its own), run again on a deadlock or a serialization failure: a failed statement changed nothing. */
export async function queryRetried<T = Row>(
  q: Queryable,
  sql: string,
  params: readonly unknown[],
): Promise<QueryResult<T>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await q.query<T>(sql, params);
    } catch (e) {
      if (attempt >= TRANSACTION_ATTEMPTS || !RETRYABLE_SQLSTATES.has(sqlState(e) ?? '')) throw e;
    }
  }
}
