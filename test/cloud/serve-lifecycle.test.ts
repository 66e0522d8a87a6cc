import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../cloud/db/pglite-db.ts';
import { PGDATA_DIR } from '../../cloud/ledger.ts';
import { startOpenAiFixture, type FixtureProvider } from '../fixtures/ai-providers/fixture-provider.ts';
import { rawRequest, register, type SiteClient } from './helpers/client.ts';
import { onPostgres, TEST_MASTER_KEY } from './helpers/cloud-harness.ts';
import { spawnServe, type ServeProcess } from './helpers/serve-process.ts';
import { signHeaders } from './helpers/sign.ts';

/**
 * The real `gatehouse-cloud serve` process: liveness and readiness probes,
 * and a SIGTERM while an AI generation is in flight against a provider that
 * never answers: the service stops taking connections, gives the request its
 * drain (1 s here), then cuts it, which releases its budget hold through the
 * ledger, and exits 0. Afterwards no hold is left and nothing is reserved.
 */
const BIN = join(import.meta.dirname, '../../bin/gatehouse-cloud.mjs');
let dataDir: string;
let provider: FixtureProvider;
let gw: ServeProcess;
let site: SiteClient;

const cli = (...args: string[]) =>
  spawnSync(process.execPath, [BIN, ...args, '--json'], {
    env: {
      ...process.env,
      GATEHOUSE_CLOUD_DATA_DIR: dataDir,
      GATEHOUSE_CLOUD_MASTER_KEY: TEST_MASTER_KEY,
      DATABASE_URL: '',
    },
    encoding: 'utf8',
    timeout: 120_000,
  });

// The embedded database's own lifecycle: not repeated in the PostgreSQL pass (db-fault.test.ts covers PostgreSQL).
describe.skipIf(onPostgres)('gatehouse-cloud serve: probes and a graceful stop', { timeout: 180_000 }, () => {
  beforeAll(async () => {
    provider = await startOpenAiFixture();
    dataDir = await mkdtemp(join(tmpdir(), 'gh-cloud-life-'));
    gw = await spawnServe(dataDir, ['--drain-seconds', '1'], { KEY_FIXTURE: provider.key });
    expect(
      cli(
        'providers',
        'add',
        'fixture',
        '--kind',
        'openai',
        '--base-url',
        provider.baseUrl,
        '--api-key-env',
        'KEY_FIXTURE',
        '--models',
        'small-1',
      ).status,
    ).toBe(0);
    const lic = JSON.parse(cli('licenses', 'create', '--plan', 'pro').stdout);
    site = await register(gw.gateway);
    expect((await site.post('license/activate', { license_key: lic.license_key })).status).toBe(200);
  }, 180_000);
  afterAll(async () => {
    if (gw && gw.child.exitCode === null) gw.child.kill('SIGKILL');
    await provider?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('answers /health/live and /health/ready', async () => {
    const live = await rawRequest(`${gw.baseUrl}/health/live`, 'GET', {});
    expect([live.status, live.body.status]).toEqual([200, 'live']);
    const ready = await rawRequest(`${gw.baseUrl}/health/ready`, 'GET', {});
    expect([ready.status, ready.body]).toEqual([200, { status: 'ready', database: 'pglite' }]);
  });

  it('on SIGTERM releases the hold of a generation still in flight and exits 0', async () => {
    provider.script({ kind: 'hang' });
    const url = `${gw.gateway}/ai/generate`;
    const body = JSON.stringify({
      product: 'verto',
      feature: 'verto.translate',
      model: 'small-1',
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 40,
    });
    const answered = new Promise<string>((resolve) => {
      const req = httpRequest(
        url,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...signHeaders(site.creds, { method: 'POST', url, body }) },
        },
        (res) => resolve(String(res.statusCode)),
      );
      req.on('error', (e) => resolve(e.message));
      req.end(body);
    });
    for (let i = 0; i < 250 && provider.count === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(provider.count).toBe(1); // the hold is taken and the provider called

    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
    expect(await answered).toMatch(/socket hang up|ECONNRESET/); // cut after the drain, not left hanging
    expect(gw.stderr()).not.toMatch(/stop did not finish|stop failed/);

    const db = await openPglite(join(dataDir, PGDATA_DIR));
    try {
      const holds = (
        await db.query<{ status: string; n: number }>(
          `SELECT status, count(*)::int AS n FROM usage_reservations GROUP BY status`,
        )
      ).rows;
      expect(holds).toEqual([{ status: 'released', n: 1 }]);
      const reserved = (
        await db.query<{ r: number }>(`SELECT COALESCE(sum(reserved), 0)::int AS r FROM usage_counters`)
      ).rows[0]!.r;
      expect(reserved).toBe(0);
    } finally {
      await db.close();
    }
  });
});
