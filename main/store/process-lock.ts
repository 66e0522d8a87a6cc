import { join } from 'node:path';
import { statfs } from 'node:fs/promises';
import { GatehouseError } from '../core/errors.ts';
import { errorCode, isDiskRefusal } from '../lib/os-error.ts';
import { ensurePrivateDir } from './atomic-write.ts';
import { isPidAlive } from './pid-alive.ts';
import {
  heldUntilExit,
  newLockRecord,
  readLockFile,
  releaseLock,
  sleep,
  tryLock,
  type LockFileRecord,
} from './lock-file.ts';

/**
 * One process writes the store: the running service holds this lock; the CLI
 * talks to that service when there is one, or takes the lock itself. The lock
 * is lock-file.ts's (complete or absent, stale ones broken under a guard).
 */

export const LOCK_FILE = 'gatehouse.lock';

export type LockOwnerKind = 'service' | 'cli';
export type LockRecord = LockFileRecord;

export interface LockHandle {
  readonly pid: number;
  readonly file: string;
  /** Removes the lock if it is still ours. Safe to call twice. */
  release(): Promise<void>;
}

export async function acquireLock(dataDir: string, owner: LockOwnerKind): Promise<LockHandle> {
  await ensurePrivateDir(dataDir);
  const file = join(dataDir, LOCK_FILE);
  const record = newLockRecord(owner);
  let unreadable = false;
  for (let attempt = 0; attempt < 20; attempt++) {
    const got = await tryLock(file, record).catch(async (e: unknown) => {
      throw (await startRefused(dataDir, e)) ?? e;
    });
    if (got.state === 'taken') return handleFor(file, record);
    if (got.state === 'held') throw lockedError(dataDir, file, got.by);
    unreadable = got.state === 'unreadable';
    if (unreadable) await sleep(20 + attempt * 10);
  }
  if (unreadable) {
    throw new GatehouseError(
      'store_locked',
      `${file} is not a lock file Gatehouse wrote; if no Gatehouse process is running, delete it and try again`,
    );
  }
  throw new GatehouseError('store_locked', `could not take the lock ${file}: it keeps changing hands; try again`);
}

/** What a start needs free in the data dir: its lock, the settings and the audit log's first lines, with room to spare. */
export const START_ROOM_BYTES = 1024 * 1024;

/** A disk that refuses a file a start writes (the lock first) is said in one sentence, naming the dir; else null. */
export async function startRefused(dataDir: string, e: unknown): Promise<GatehouseError | null> {
  if (!isDiskRefusal(e)) return null;
  const code = errorCode(e);
  const free = await statfs(dataDir).then(
    (s) => s.bavail * s.bsize,
    () => null,
  );
  const why =
    code === 'ENOSPC' || code === 'EDQUOT'
      ? `its disk is full (${code}${free === null ? '' : `, ${Math.floor(free / 1024)} KiB free`})`
      : `its disk refused a write (${code})`;
  return new GatehouseError(
    'storage_unavailable',
    `cannot start on ${dataDir}: ${why}; Gatehouse needs at least ${START_ROOM_BYTES / 1024 / 1024} MiB free there (its lock, settings and audit log): free some space, then start again`,
    { data_dir: dataDir, error: code, free_bytes: free, needed_bytes: START_ROOM_BYTES },
  );
}

/** Who holds the lock, if anyone: `alive` false means a stale lock that the next acquirer takes over. */
export async function readLockOwner(dataDir: string): Promise<(LockRecord & { alive: boolean }) | null> {
  const held = await readLockFile(join(dataDir, LOCK_FILE));
  if (held === 'missing' || held === 'invalid') return null;
  return { ...held, alive: isPidAlive(held.pid) };
}

function lockedError(dataDir: string, file: string, held: LockRecord): GatehouseError {
  const hint =
    held.owner === 'service'
      ? 'stop that service first, or use the CLI while it runs (it talks to the running service)'
      : 'wait for that command to finish';
  return new GatehouseError(
    'store_locked',
    `another Gatehouse process (pid ${held.pid}, ${held.owner ?? 'unknown'}) holds ${dataDir}; ${hint}. If no Gatehouse process is running, delete ${file}.`,
    { pid: held.pid, owner: held.owner ?? null, started: held.started },
  );
}

/** A clean exit that skipped release() leaves no lock behind; a crash leaves a stale one that the next acquirer takes over. */
function handleFor(file: string, record: LockRecord): LockHandle {
  heldUntilExit(file, record);
  let released = false;
  return {
    pid: record.pid,
    file,
    async release() {
      if (released) return;
      released = true;
      heldUntilExit(file, null);
      await releaseLock(file, record);
    },
  };
}
