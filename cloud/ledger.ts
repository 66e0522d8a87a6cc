import { openPglite } from './db/pglite-db.ts';
import { openPostgres } from './db/pg-db.ts';
import type { Db } from './db/db.ts';
import { existsSync } from 'node:fs';
import { migrate } from './db/migrate.ts';
import { loadMasterKey } from './crypto/master-key.ts';
import { seedPlans } from './repo/catalog-repo.ts';
import { masterKeyStore } from './repo/keys-repo.ts';
import { reachable } from './db/unreachable.ts';
import type { AiRuntime, Ctx } from './services/context.ts';
import type { Logger } from '../main/lib/logger.ts';
import { BreakerBoard } from './ai/routing/breaker.ts';
import { TaskRunner } from './services/reports-service.ts';
import { ConfigCache } from './services/config-cache.ts';
import { RequestLog, type RequestLogOptions } from './services/request-log.ts';
import { KeyRing } from './services/key-ring.ts';
import { join } from 'node:path';

export interface LedgerOptions {
  dataDir: string;
  /** a PostgreSQL URL; absent: PGlite in `<dataDir>/pgdata` */
  databaseUrl?: string;
  /** PGlite in memory (tests and benchmarks that need no files) */
  memory?: boolean;
  /**
   * An open database to use instead of opening one (tests: an in-memory PGlite reused from harness to harness);
   * migrated and closed by the ledger as any other.
   */
  database?: () => Promise<Db>;
  env?: NodeJS.ProcessEnv;
  log: Logger;
  now?: () => Date;
  /** release files; default `<dataDir>/releases` (or GATEHOUSE_CLOUD_RELEASES_DIR) */
  releasesDir?: string;
  ai?: Partial<Pick<AiRuntime, 'hopTimeoutMs' | 'deadlineMs'>>;
  requestLog?: RequestLogOptions;
}

export const AI_DEFAULTS = { hopTimeoutMs: 45_000, deadlineMs: 100_000 } as const;
export const RELEASES_DIR_ENV = 'GATEHOUSE_CLOUD_RELEASES_DIR';

export const PGDATA_DIR = 'pgdata';

async function openDatabase(o: LedgerOptions): Promise<Db> {
  if (o.databaseUrl)
    return openPostgres(o.databaseUrl, {
      onConnectionError: (e) => o.log.warn('the database dropped a connection', { error: e.message }),
    });
  if (o.database) return o.database();
  if (o.memory) return openPglite(undefined);
  const dir = join(o.dataDir, PGDATA_DIR);
  // initdb in WebAssembly takes a while (15 s and more on a busy machine): say so rather than sit silent.
  if (!existsSync(dir)) o.log.info(`creating the embedded database in ${dir} (first start: this takes a little while)`);
  return openPglite(dir);
}

/**
 * Opens the ledger: the database (migrated, default plans seeded), the master
 * key (checked against the one the database was set up with), the signing
 * keys (one made when there is none). Used by `serve` and by operator
 * commands alike.
 */
export async function openLedger(o: LedgerOptions): Promise<Ctx> {
  const now = o.now ?? (() => new Date());
  const db = await openDatabase(o);
  try {
    await reachable(() => migrate(db), o.databaseUrl);
    const box = await loadMasterKey(o.env ?? process.env, o.dataDir, masterKeyStore(db), (m, f) => o.log.warn(m, f));
    await db.transaction((tx) => seedPlans(tx, now()));
    const keys = new KeyRing(db, box);
    await keys.ensureKey(now());
    const env = o.env ?? process.env;
    const ai: AiRuntime = { breakers: new BreakerBoard(() => now().getTime()), env, ...AI_DEFAULTS, ...o.ai };
    const base = { db, box, keys, now, log: o.log };
    const tasks = new TaskRunner(base);
    const requestLog = new RequestLog(db, o.log, o.requestLog);
    return {
      ...base,
      ai,
      releasesDir: o.releasesDir ?? (env[RELEASES_DIR_ENV] || join(o.dataDir, 'releases')),
      tasks,
      requestLog,
      cache: new ConfigCache(),
    };
  } catch (e) {
    await db.close().catch(() => {});
    throw e;
  }
}
