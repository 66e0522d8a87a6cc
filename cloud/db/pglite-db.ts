import v8 from 'node:v8';
import { PGlite } from '@electric-sql/pglite';
import { avoidJsToWasmInlining } from '../../main/lib/wasm-jit-guard.ts';
import { migrate } from './migrate.ts';
import {
  PARSERS,
  RETRYABLE_SQLSTATES,
  TRANSACTION_ATTEMPTS,
  sqlState,
  type Db,
  type Queryable,
  type QueryResult,
} from './db.ts';
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
  baselineWasm();
  avoidJsToWasmInlining(); // PGlite is WebAssembly too: the same V8 abort is not worth risking (main/lib/wasm-jit-guard.ts)
  return adapt(
    await PGlite.create({
      ...(dir ? { dataDir: dir } : {}),
      ...(opts.loadDataDir ? { loadDataDir: opts.loadDataDir } : {}),
      parsers: PARSERS,
      postgresqlconf: PGLITE_SETTINGS,
    }),
  );
}

/**
 * PGlite starts PostgreSQL with shared_buffers = 128 MB inside its
 * WebAssembly memory, and PostgreSQL touches all of it: most of an idle
 * gateway's memory. The embedded ledger is one process with one connection
 * and a working set of a few megabytes (counters, the hot rows of the
 * day), so 8 MB of buffers holds it; colder pages come from the files
 * through the OS cache. Durability settings are left as PGlite has them.
 */
export const PGLITE_SETTINGS = ['shared_buffers = 8MB', 'max_connections = 10'];

/**
 * PostgreSQL's WebAssembly is compiled by V8's baseline compiler only
 * (Liftoff). By default V8 also recompiles hot functions with its optimizing
 * compiler, and for a 9 MB module that code stays resident: about 60 MB of
 * an idle gateway. Measured on the ledger's statements, baseline-only code
 * is no slower (the recompiling competes for the same cores); see
 * test/bench/portkey-bench.ts. Set before the module is compiled, once per
 * process; the gateway runs no other WebAssembly.
 */
function baselineWasm(): void {
  if (process.env.GATEHOUSE_CLOUD_WASM_TIER_UP === '1') return;
  v8.setFlagsFromString('--liftoff-only');
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
