import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../../cloud/db/migrations/index.ts';
import { rawRequest } from '../helpers/client.ts';
import { startHarness, type Harness } from '../helpers/cloud-harness.ts';

/** The probes on the real gateway: ready means "database reachable and its schema the one this build needs". */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
}, 180_000);
afterAll(() => h?.stop());

describe('probes', () => {
  it('live and ready answer 200; ready and the API health answer 503 while the schema is not current', async () => {
    expect((await rawRequest(`${h.svc.baseUrl}/health/live`, 'GET', {})).status).toBe(200);
    expect((await rawRequest(`${h.svc.baseUrl}/health/ready`, 'GET', {})).status).toBe(200);
    const newest = MIGRATIONS.at(-1)!;
    const row = (
      await h.svc.ctx.db.query<{ name: string; applied_at: string }>(
        'SELECT name, applied_at FROM cloud_schema_migrations WHERE version = $1',
        [newest.version],
      )
    ).rows[0]!;
    await h.svc.ctx.db.query('DELETE FROM cloud_schema_migrations WHERE version = $1', [newest.version]);
    try {
      const ready = await rawRequest(`${h.svc.baseUrl}/health/ready`, 'GET', {});
      expect([ready.status, ready.body.error.code, ready.headers['retry-after']]).toEqual([
        503,
        'gateway_unavailable',
        '5',
      ]);
      expect(ready.body.error.message).toMatch(new RegExp(`needs ${newest.version}`));
      expect((await rawRequest(`${h.gateway}/health`, 'GET', {})).status).toBe(503);
      expect((await rawRequest(`${h.svc.baseUrl}/health/live`, 'GET', {})).status).toBe(200);
    } finally {
      await h.svc.ctx.db.query('INSERT INTO cloud_schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
        newest.version,
        row.name,
        row.applied_at,
      ]);
    }
    expect((await rawRequest(`${h.svc.baseUrl}/health/ready`, 'GET', {})).status).toBe(200);
  });

  it('a probe path under another method is 405, and the probes are not under the API prefix', async () => {
    expect((await rawRequest(`${h.svc.baseUrl}/health/ready`, 'POST', {}, '')).status).toBe(405);
    expect((await rawRequest(`${h.gateway}/health/ready`, 'GET', {})).status).toBe(404);
  });
});
