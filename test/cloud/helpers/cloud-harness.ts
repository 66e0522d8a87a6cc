import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startCloudService, type CloudService, type CloudServiceOptions } from '../../../cloud/service.ts';
import { runOperator, type OperatorCommand } from '../../../cloud/services/operator.ts';
import { createLogger } from '../../../main/lib/logger.ts';

/**
 * The real service for tests: PGlite by default; with
 * GATEHOUSE_CLOUD_TEST_DB=postgres (and DATABASE_URL, set by
 * scripts/with-postgres.sh) a fresh database on that server per harness.
 */
export const onPostgres = process.env.GATEHOUSE_CLOUD_TEST_DB === 'postgres';
export const TEST_MASTER_KEY = Buffer.alloc(32, 7).toString('base64');

export async function freshDatabaseUrl(): Promise<string> {
  const admin = process.env.DATABASE_URL;
  if (!admin) throw new Error('GATEHOUSE_CLOUD_TEST_DB=postgres needs DATABASE_URL (scripts/with-postgres.sh sets it)');
  const name = `gh_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const u = new URL(admin);
  u.pathname = `/${name}`;
  return u.toString();
}

export interface Harness {
  svc: CloudService;
  gateway: string;
  dataDir: string;
  op<T = unknown>(command: OperatorCommand, args?: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

export async function startHarness(o: Partial<CloudServiceOptions> & { databaseUrl?: string } = {}): Promise<Harness> {
  const dataDir = o.dataDir ?? (await mkdtemp(join(tmpdir(), 'gh-cloud-')));
  const databaseUrl = o.databaseUrl ?? (onPostgres ? await freshDatabaseUrl() : undefined);
  const svc = await startCloudService({
    dataDir,
    databaseUrl,
    memory: !databaseUrl,
    log: createLogger({ level: 'error' }),
    env: { GATEHOUSE_CLOUD_MASTER_KEY: TEST_MASTER_KEY },
    runtimeFile: false,
    rateLimits: { perAddress: 0, perSite: 0, register: 0 },
    ...o,
  });
  return {
    svc,
    gateway: `${svc.baseUrl}/gateway/v1`,
    dataDir,
    op: (command, args = {}) => runOperator(svc.ctx, command, args) as never,
    stop: async () => {
      await svc.stop();
      if (!o.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
