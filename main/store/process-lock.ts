import { join } from 'node:path';
import { GatehouseError } from '../core/errors.ts';
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
    const got = await tryLock(file, record);
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
