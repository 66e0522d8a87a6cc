import { afterAll, describe, expect, it } from 'vitest';
import { onPostgres, startHarness, type Harness } from '../helpers/cloud-harness.ts';
import { accountWithSites } from '../helpers/accounts.ts';

// The harnesses' reused in-memory databases (test/cloud/helpers/pglite-pool.ts): one back from the pool is what a
// freshly loaded one is, whatever the harness before it left; a database the test closed stays closed to it.
const counts = async (h: Harness) => {
  const tables = await h.svc.ctx.db.query<{ t: string }>(
    `SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
  );
  const out: Record<string, number> = {};
  for (const { t } of tables.rows)
    out[t] = (await h.svc.ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${t}"`)).rows[0]!.n;
  const seqs = await h.svc.ctx.db.query<{ s: string; v: number | null }>(
    `SELECT sequencename AS s, last_value AS v FROM pg_sequences WHERE schemaname = 'public' ORDER BY 1`,
  );
  for (const { s, v } of seqs.rows) out[`sequence ${s}`] = v ?? -1;
  return out;
};

describe.skipIf(onPostgres)('the harness database pool', () => {
  const open: Harness[] = [];
  afterAll(async () => {
    for (const h of open) await h.stop();
  });

  it('hands the next harness a database as a fresh one is: no row, identity or session setting of the last', async () => {
    // Two at once: the second cannot be the first's database, so it is a fresh load (or an earlier file's).
    const used = await startHarness();
    const fresh = await startHarness();
    open.push(fresh);
    const before = await counts(fresh);
    await accountWithSites(used, 'pro', 1);
    await used.svc.ctx.db.query(`SELECT set_config('application_name', 'left-behind', false)`);
    await used.svc.ctx.db.query(`SELECT nextval('request_log_id_seq')`);
    expect(Object.values(await counts(used)).reduce((a, b) => a + b)).toBeGreaterThan(
      Object.values(before).reduce((a, b) => a + b),
    );
    await used.stop();

    const next = await startHarness();
    open.push(next);
    expect(await counts(next)).toEqual(before);
    const app = await next.svc.ctx.db.query<{ v: string }>(`SELECT current_setting('application_name') AS v`);
    expect(app.rows[0]!.v).not.toBe('left-behind');
    // and it works as a fresh one does
    expect((await accountWithSites(next, 'pro', 1)).sites).toHaveLength(1);
  });

  it('a database the service closed answers as a closed one: the gateway is unavailable, not broken', async () => {
    const h = await startHarness();
    await h.svc.ctx.db.close();
    await expect(h.svc.ctx.db.query('SELECT 1')).rejects.toMatchObject({ code: 'gateway_unavailable' });
    await h.stop();
  });
});
