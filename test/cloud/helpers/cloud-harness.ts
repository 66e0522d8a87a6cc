import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { migratedPgliteDump } from '../../../cloud/db/pglite-db.ts';
import { MIGRATIONS } from '../../../cloud/db/migrations/index.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startCloudService, type CloudService, type CloudServiceOptions } from '../../../cloud/service.ts';
import { runOperator, type OperatorCommand } from '../../../cloud/services/operator.ts';
import { createLogger } from '../../../main/lib/logger.ts';
import { pooledPglite } from './pglite-pool.ts';

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

/**
 * A migrated PGlite data dir, dumped once to the temp folder and loaded by
 * each in-memory database the harnesses' pool makes (pglite-pool.ts): PGlite's
 * initdb takes seconds (tens of seconds on a busy machine), loading a dump a
 * fraction of that.
 */
async function pgliteTemplate(): Promise<Blob> {
  const pgliteVersion = JSON.parse(
    await readFile(join(import.meta.dirname, '../../../node_modules/@electric-sql/pglite/package.json'), 'utf8'),
  ).version;
  const schema = createHash('sha256')
    .update(MIGRATIONS.map((m) => m.sql).join('\n'))
    .digest('hex')
    .slice(0, 12);
  const file = join(tmpdir(), `gatehouse-cloud-pglite-${pgliteVersion}-${schema}.tar`);
  try {
    return new Blob([await readFile(file)]);
  } catch {
    const dump = await migratedPgliteDump();
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, Buffer.from(await dump.arrayBuffer()));
    await rename(tmp, file);
    return dump;
  }
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
    ...(databaseUrl ? {} : { database: () => pooledPglite(pgliteTemplate) }),
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
