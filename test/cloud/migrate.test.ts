import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../cloud/db/db.ts';
import { migrate, splitStatements } from '../../cloud/db/migrate.ts';
import { MIGRATIONS } from '../../cloud/db/migrations/index.ts';
import { openPglite } from '../../cloud/db/pglite-db.ts';
import { openPostgres } from '../../cloud/db/pg-db.ts';
import { freshDatabaseUrl, onPostgres } from './helpers/cloud-harness.ts';

let db: Db;
beforeAll(async () => {
  db = onPostgres ? openPostgres(await freshDatabaseUrl()) : await openPglite(undefined);
}, 180_000);
afterAll(() => db?.close());

describe('migrations', () => {
  it('split on statement ends but not inside dollar-quoted function bodies', () => {
    expect(
      splitStatements(
        'CREATE TABLE a (x int);\nCREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $fn$\nBEGIN\n  RETURN 1;\nEND\n$fn$;\nSELECT 1;',
      ),
    ).toEqual([
      'CREATE TABLE a (x int)',
      'CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $fn$\nBEGIN\n  RETURN 1;\nEND\n$fn$',
      'SELECT 1',
    ]);
  });

  it('apply every version once, in order, and do nothing the second time', async () => {
    const newest = MIGRATIONS.at(-1)!.version;
    expect(await migrate(db)).toEqual({ from: 0, to: newest });
    expect(await migrate(db)).toEqual({ from: newest, to: newest });
    const rows = await db.query<{ version: number }>('SELECT version FROM cloud_schema_migrations ORDER BY version');
    expect(rows.rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
  });

  it('refuse a database newer than the code', async () => {
    await expect(migrate(db, MIGRATIONS.slice(0, 1))).rejects.toMatchObject({
      code: 'internal_error',
      message: expect.stringMatching(/newer gatehouse-cloud/),
    });
  });

  // Only on PostgreSQL: one PGlite connection serialises everything anyway, so off it this is reported as skipped.
  it.skipIf(!onPostgres)('concurrent starts (several instances) apply each migration exactly once', async () => {
    const url = await freshDatabaseUrl();
    const dbs = [openPostgres(url), openPostgres(url), openPostgres(url)];
    const results = await Promise.all(dbs.map((d) => migrate(d)));
    expect(results.filter((r) => r.from === 0)).toHaveLength(1);
    await Promise.all(dbs.map((d) => d.close()));
  });
});

describe('version 8: mcp.upstreams in the free plan', () => {
  it('is added once to a stored free plan, keeping the operator’s other features; other plans untouched', async () => {
    const old = onPostgres ? openPostgres(await freshDatabaseUrl()) : await openPglite(undefined);
    try {
      await migrate(
        old,
        MIGRATIONS.filter((m) => m.version < 8),
      );
      const row = (id: string, rank: number, features: string[]) =>
        old.query(
          `INSERT INTO plans (id, rank, features, products, site_limit, limits, update_channels) VALUES ($1, $2, $3::jsonb, '["mcp"]', 1, '[]', '["stable"]')`,
          [id, rank, JSON.stringify(features)],
        );
      // a gateway that stored its plans before: free without upstreams, an operator's own feature in it
      await row('free', 0, ['mcp.core', 'operator.extra']);
      await row('pro', 10, ['mcp.core', 'verto.translate']);
      expect(await migrate(old)).toEqual({ from: 7, to: MIGRATIONS.at(-1)!.version });
      const features = async (id: string) =>
        (await old.query<{ features: string[] }>('SELECT features FROM plans WHERE id = $1', [id])).rows[0]!.features;
      expect(await features('free')).toEqual(['mcp.core', 'operator.extra', 'mcp.upstreams']);
      expect(await features('pro')).toEqual(['mcp.core', 'verto.translate']);
      // a free plan that already has it is not given a second copy
      await old.query(`DELETE FROM cloud_schema_migrations WHERE version = 8`);
      await migrate(old);
      expect(await features('free')).toEqual(['mcp.core', 'operator.extra', 'mcp.upstreams']);
    } finally {
      await old.close();
    }
  });
});
