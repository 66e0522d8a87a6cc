import { CloudError } from '../errors.ts';
import type { Db } from './db.ts';
import { MIGRATIONS, type Migration } from './migrations/index.ts';

// Any fixed number: every instance takes the same transaction-scoped advisory lock.
const MIGRATION_LOCK = 7_461_001;

/**
 * Brings the schema up to the newest version, in one transaction under an
 * advisory lock, so several instances starting at once on one server apply
 * each migration exactly once. A database newer than this code is refused.
 */
export async function migrate(
  db: Db,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<{ from: number; to: number }> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(
      'CREATE TABLE IF NOT EXISTS cloud_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const { rows } = await tx.query<{ v: number | null }>('SELECT max(version) AS v FROM cloud_schema_migrations');
    const from = rows[0]?.v ?? 0;
    const newest = migrations.at(-1)?.version ?? 0;
    if (from > newest) {
      throw new CloudError(
        'internal_error',
        `the database schema is version ${from} but this gatehouse-cloud knows versions up to ${newest}: run a newer gatehouse-cloud`,
      );
    }
    for (const m of migrations) {
      if (m.version <= from) continue;
      // Multi-statement text runs through the simple query protocol, which takes no parameters.
      for (const statement of splitStatements(m.sql)) await tx.query(statement);
      await tx.query('INSERT INTO cloud_schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
    }
    return { from, to: Math.max(from, newest) };
  });
}

/** Splits on `;` at a line end, except inside dollar-quoted bodies ($fn$ ... $fn$) of functions. */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let start = 0;
  let quote: string | null = null;
  const re = /\$[A-Za-z_]*\$|;[ \t]*(?:\n|$)/g;
  for (let m = re.exec(sql); m; m = re.exec(sql)) {
    if (m[0].startsWith('$')) quote = quote === null ? m[0] : quote === m[0] ? null : quote;
    else if (quote === null) {
      out.push(sql.slice(start, m.index));
      start = m.index + m[0].length;
    }
  }
  out.push(sql.slice(start));
  return out.map((s) => s.trim()).filter(Boolean);
}
