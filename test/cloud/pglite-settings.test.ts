import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, startHarness, type Harness } from './helpers/cloud-harness.ts';

/**
 * The embedded database's memory settings (an idle gateway once held
 * 337 MB, most of it PGlite's 128 MB of shared buffers and optimized
 * WebAssembly code): the buffers are 8 MB, the durability settings are
 * PGlite's own, and the ledger works on them. The resident figures are in
 * test/bench/portkey-bench.ts.
 */
let h: Harness;
beforeAll(async () => {
  if (!onPostgres) h = await startHarness();
}, 180_000);
afterAll(() => h?.stop());

describe.skipIf(onPostgres)('the embedded database', () => {
  it('runs with 8 MB of shared buffers and durability as PGlite sets it', async () => {
    const show = async (name: string) =>
      (await h.svc.ctx.db.query<Record<string, string>>(`SHOW ${name}`)).rows[0]![name];
    expect(await show('shared_buffers')).toBe('8MB');
    expect(await show('max_connections')).toBe('10');
    expect(await show('synchronous_commit')).toBe('on');
    expect(await show('full_page_writes')).toBe('on');
    const lic = await h.op<{ license_key: string }>('licenses.create', { plan: 'pro' });
    expect(lic.license_key).toMatch(/^ghl_/);
  });
});
