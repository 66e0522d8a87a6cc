import { readRuntime } from '../store/runtime-file.ts';
import { openVault, type VaultChoice } from '../store/vault.ts';
import { ADMIN_KEY_ACCOUNT } from '../store/vault-account.ts';
import type { ApiDispatch, ApiInput, RawDispatch } from '../contract/api.ts';
import type { RuntimeInfo } from '../contract/health.ts';
import type { Logger } from '../lib/logger.ts';
import { GatehouseError } from '../core/errors.ts';
import { httpDispatch } from './admin-client.ts';
import { retry } from '../lib/retry.ts';
import { VERSION } from '../version.ts';
import { handsOver, RunElsewhere } from './run-elsewhere.ts';

/**
 * The CLI's way to the service's actions: through a running service's HTTP
 * API (as the admin key's holder), or on the files (as the data dir's owner);
 * either way through the core's `invoke`, so the answers are the same.
 */
export interface Connection {
  mode: 'service' | 'direct';
  dispatch: ApiDispatch;
  /** the same, for input assembled from flags: the service checks it against the action's schema, as any input */
  send: RawDispatch;
  /** `audit.export` written to `out` */
  exportAudit(input: ApiInput<'audit.export'>, out: NodeJS.WritableStream): Promise<void>;
  close(): Promise<void>;
}

// A direct command holds the lock for well under a second; waiting this long
// lets a burst of CLI commands (scripts, cron) run one after the other instead
// of failing, while a lock that is never released still fails in bounded time.
export const DEFAULT_LOCK_WAIT_MS = 15_000;

function lockWaitMs(env: NodeJS.ProcessEnv): number {
  const raw = env.GATEHOUSE_LOCK_WAIT_MS;
  if (raw === undefined || raw === '') return DEFAULT_LOCK_WAIT_MS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0)
    throw new GatehouseError(
      'invalid_value',
      `GATEHOUSE_LOCK_WAIT_MS must be a whole number of milliseconds (got '${raw}')`,
    );
  return n;
}

/**
 * Only one process writes the store: with a service running the CLI goes
 * through its admin API (authenticated with the admin key from the vault);
 * otherwise it takes the data dir lock and works on the files itself. While
 * another process holds the lock (another CLI command, or a service that is
 * still starting or stopping) it waits a bounded time, re-checking for a
 * service each round, then fails with store_locked.
 */
export async function connect(
  dataDir: string,
  vaultChoice: VaultChoice,
  log: Logger,
  opts: { lockWaitMs?: number } = {},
): Promise<Connection> {
  return retryWhileLocked(async () => {
    const runtime = await readRuntime(dataDir);
    // Decided on this one read of runtime.json, before anything is sent.
    if (handsOver() && (!runtime || runtime.version !== VERSION)) throw new RunElsewhere();
    if (runtime) return viaService(dataDir, runtime, vaultChoice, log);
    // Its own module, so that the build that only talks to a running service can leave it out (main/cli/build.ts).
    const { direct } = await import('./direct-connection.ts');
    return direct(dataDir, vaultChoice, log);
  }, opts);
}

/**
 * Runs `attempt` again while it fails with store_locked (and `wait` agrees),
 * for at most `lockWaitMs` (default GATEHOUSE_LOCK_WAIT_MS or 15 s); then the
 * last store_locked error is thrown, saying how long it waited.
 */
export async function retryWhileLocked<T>(
  attempt: () => Promise<T>,
  opts: { lockWaitMs?: number; wait?: (e: GatehouseError) => boolean } = {},
): Promise<T> {
  const waitMs = opts.lockWaitMs ?? lockWaitMs(process.env);
  const started = Date.now();
  let outwaited = false;
  try {
    return await retry(() => attempt(), {
      attempts: Infinity,
      maxElapsedMs: waitMs,
      // Jittered backoff so a crowd of waiters does not retry in lockstep.
      baseMs: 40,
      capMs: 300,
      retryable: (e) =>
        (outwaited = e instanceof GatehouseError && e.code === 'store_locked' && (!opts.wait || opts.wait(e))),
    });
  } catch (e) {
    // still locked when the time ran out: say how long we waited
    if (!outwaited || waitMs === 0) throw e;
    const locked = e as GatehouseError;
    throw new GatehouseError(
      'store_locked',
      `${locked.message} (waited ${((Date.now() - started) / 1000).toFixed(1)} s)`,
      locked.details,
    );
  }
}

async function viaService(
  dataDir: string,
  runtime: RuntimeInfo,
  vaultChoice: VaultChoice,
  log: Logger,
): Promise<Connection> {
  const vault = await openVault({ dataDir, backend: vaultChoice, log, warnFileVault: false });
  const key = await vault.get(ADMIN_KEY_ACCOUNT);
  if (!key)
    throw new GatehouseError(
      'unauthorized',
      `a service runs (pid ${runtime.pid}) but its admin key is not in the ${vault.label} vault of this user; run the CLI as the same OS user`,
    );
  const http = httpDispatch(runtime, key);
  return {
    mode: 'service',
    dispatch: http.dispatch,
    send: http.dispatch,
    exportAudit: (input, out) => http.download('audit.export', input, out),
    close: async () => undefined,
  };
}
