import { PGlite } from '@electric-sql/pglite';
import { migrate } from './migrate.ts';
import { PARSERS, RETRYABLE_SQLSTATES, TRANSACTION_ATTEMPTS, sqlState, type Db, type Queryable, type QueryResult } from './db.ts';
import { asDbFault, failedStatement } from './db-unavailable.ts';

/**
 * PGlite (PostgreSQL compiled to WebAssembly) in `dir`, or in memory when
 * `dir` is undefined. One connection per process: PGlite serialises queries
 * and transactions itself, and only one process may open a data dir at a time
 * (the service holds it; operator commands then go through the service).
 * `loadDataDir` starts from a dumped data dir (PGlite's dumpDataDir) instead
 * of running initdb: tests and benchmarks start many in-memory databases.
 */
export async function openPglite(dir: string | undefined, opts: { loadDataDir?: Blob } = {}): Promise<Db> {
  return adapt(await PGlite.create({ ...(dir ? { dataDir: dir } : {}), ...(opts.loadDataDir ? { loadDataDir: opts.loadDataDir } : {}), parsers: PARSERS }));
}

/** A fresh database with every migration applied, dumped: what `loadDataDir` takes. */
export async function migratedPgliteDump(): Promise<Blob> {
  const pg = await PGlite.create({ parsers: PARSERS });
  try {
    await migrate(adapt(pg));
    return await pg.dumpDataDir('none');
  } finally {
    await pg.close();
  }
}

function adapt(pg: PGlite): Db {
  const wrap = (q: { query: PGlite['query'] }): Queryable => ({
    async query<T>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<T>> {
      try {
        const r = await q.query<T>(sql, params as unknown[]);
        return { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length };
      } catch (e) {
        // A closed database (a request still running while the service stops) is "away", not a bug: 503.
        throw failedStatement(e);
      }
    },
  });
  const self = wrap(pg);
  return {
    kind: 'pglite',
    query: self.query,
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await pg.transaction((tx) => fn(wrap(tx)));
        } catch (e) {
          if (attempt >= TRANSACTION_ATTEMPTS || !RETRYABLE_SQLSTATES.has(sqlState(e) ?? '')) throw asDbFault(e);
        }
      }
    },
    async exec(sql: string): Promise<void> {
      await pg.exec(sql);
    },
    close: () => pg.close(),
  };
}
