import { openPglite } from '../../../cloud/db/pglite-db.ts';
import { failedStatement } from '../../../cloud/db/db-unavailable.ts';
import type { Db } from '../../../cloud/db/db.ts';

/**
 * In-memory PGlite databases reused from harness to harness within a test worker. Loading the migrated dump
 * (41 MB, most of it PostgreSQL's own catalog and a WAL segment) and starting PostgreSQL again costs about 0.4 s of
 * CPU per harness; putting back one that a stopped harness left costs a few hundredths of that. A database goes back
 * to the pool as the freshly loaded dump was: every table but the migrations' holding the rows it held then (a
 * migration seeds some), every sequence where it stood, the session's own state (settings, temporary tables,
 * advisory locks) discarded. One that cannot be put back so is closed instead.
 */
const KEPT = 3;
interface Pooled {
  db: Db;
  /** the dump's own rows (a migration seeds some tables) and sequence positions, put back at every return */
  fresh: FreshState;
}
const idle: Pooled[] = [];

export async function pooledPglite(template: () => Promise<Blob>): Promise<Db> {
  let pooled = idle.pop();
  if (!pooled) {
    const db = await openPglite(undefined, { loadDataDir: await template() });
    pooled = { db, fresh: await freshState(db) };
  }
  const { db: base } = pooled;
  let closed = false;
  // What a closed PGlite throws, so a test that closes the database (the database lost) sees the service as it would.
  const refuse = () => failedStatement(new Error('PGlite is closed'));
  return {
    kind: base.kind,
    query: (sql, params) => (closed ? Promise.reject(refuse()) : base.query(sql, params)),
    transaction: (fn) => (closed ? Promise.reject(refuse()) : base.transaction(fn)),
    exec: (sql) => (closed ? Promise.reject(refuse()) : base.exec(sql)),
    async close() {
      if (closed) return;
      closed = true;
      // PGlite runs one statement at a time: these wait for any the stopped service still had running.
      try {
        if (idle.length >= KEPT) throw new Error('the pool is full');
        await restore(pooled);
        idle.push(pooled);
      } catch {
        await base.close().catch(() => {});
      }
    },
  };
}

/**
 * Closes the databases the pool holds. A test worker ends without it; a script that runs harnesses (a benchmark) needs
 * it to exit: an idle PGlite keeps PostgreSQL's timer armed, which holds Node's event loop open.
 */
export async function closePooledPglites(): Promise<void> {
  await Promise.all(idle.splice(0).map(({ db }) => db.close().catch(() => {})));
}

interface FreshState {
  tables: string[];
  rows: Array<{ table: string; columns: string; json: string }>;
  sequences: Array<{ name: string; last: number | null }>;
}

async function freshState(db: Db): Promise<FreshState> {
  const tables = (
    await db.query<{ name: string }>(
      `SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'cloud_schema_migrations' ORDER BY tablename`,
    )
  ).rows.map((r) => r.name);
  const rows: FreshState['rows'] = [];
  for (const table of tables) {
    // generated columns are left to the database, as on the first insert
    const columns = (
      await db.query<{ name: string }>(
        `SELECT quote_ident(attname) AS name FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`,
        [table],
      )
    ).rows
      .map((r) => r.name)
      .join(', ');
    const json = (await db.query<{ j: string }>(`SELECT coalesce(json_agg(t), '[]')::text AS j FROM ${table} t`))
      .rows[0]!.j;
    if (json !== '[]') rows.push({ table, columns, json });
  }
  const sequences = (
    await db.query<{ name: string; last: number | null }>(
      `SELECT quote_ident(sequencename) AS name, last_value AS last FROM pg_sequences WHERE schemaname = 'public'`,
    )
  ).rows;
  return { tables, rows, sequences };
}

async function restore({ db, fresh }: Pooled): Promise<void> {
  await db.transaction(async (tx) => {
    if (fresh.tables.length) await tx.query(`TRUNCATE ${fresh.tables.join(', ')} CASCADE`);
    for (const r of fresh.rows)
      await tx.query(
        `INSERT INTO ${r.table} (${r.columns}) OVERRIDING SYSTEM VALUE SELECT ${r.columns} FROM json_populate_recordset(NULL::${r.table}, $1::json)`,
        [r.json],
      );
    for (const s of fresh.sequences)
      await tx.query(s.last === null ? `SELECT setval($1, 1, false)` : `SELECT setval($1, $2, true)`, [
        s.name,
        ...(s.last === null ? [] : [s.last]),
      ]);
  });
  await db.exec('DISCARD ALL');
}
