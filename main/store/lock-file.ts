import { randomBytes } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import { readFile, stat, unlink } from 'node:fs/promises';
import { createExclusive } from './atomic-write.ts';
import { isPidAlive } from './pid-alive.ts';

/**
 * The one cross-process lock primitive: the data dir's process lock
 * (process-lock.ts) and the short critical sections around a small shared
 * file (file-mutex.ts) are both this.
 *
 * The lock file appears complete or not at all (createExclusive links a
 * finished temp file into place). A lock whose pid is gone is stale; breaking
 * it is guarded by a second lock, `<file>.breaking`, under which the holder is
 * read again and removed only if it is still the stale one seen: two
 * processes can never both "break" it and then both hold it. A live holder is
 * never broken, however long it holds.
 */

export interface LockFileRecord {
  pid: number;
  started: string;
  nonce?: string;
  /** who holds it, for the person told it is locked (process-lock: 'service' | 'cli') */
  owner?: string;
}

/**
 * A lock file's JSON as a record, or null. By hand, with only the record's own fields: the vault's file mutex takes a
 * lock before every command the CLI sends a running service, and that path loads no schema library
 * (main/cli/admin-client.ts).
 */
export function lockRecordOf(v: unknown): LockFileRecord | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  if (typeof o.pid !== 'number' || !Number.isSafeInteger(o.pid) || typeof o.started !== 'string') return null;
  if (o.nonce !== undefined && typeof o.nonce !== 'string') return null;
  if (o.owner !== undefined && (typeof o.owner !== 'string' || o.owner.length > 40)) return null;
  return {
    pid: o.pid,
    started: o.started,
    ...(o.nonce !== undefined ? { nonce: o.nonce } : {}),
    ...(o.owner !== undefined ? { owner: o.owner } : {}),
  };
}

// A breaker lives for milliseconds, and an unreadable lock is only being written for as long: one older
// than this was left by a process that died mid-break, or is not ours.
export const BREAKER_MAX_AGE_MS = 10_000;

export const newLockRecord = (owner?: string): LockFileRecord => ({
  pid: process.pid,
  started: new Date().toISOString(),
  nonce: randomBytes(9).toString('base64url'),
  ...(owner ? { owner } : {}),
});

/** One try: taken; held by a live process; held by something unreadable (not old yet); or try again now (it changed hands, or a stale one was broken). */
export type LockAttempt =
  { state: 'taken' } | { state: 'held'; by: LockFileRecord } | { state: 'unreadable' } | { state: 'retry' };

export async function tryLock(file: string, record: LockFileRecord): Promise<LockAttempt> {
  if (await createExclusive(file, JSON.stringify(record))) return { state: 'taken' };
  const held = await readLockFile(file);
  if (held === 'missing') return { state: 'retry' }; // released between our create and our read
  if (held !== 'invalid' && isPidAlive(held.pid)) return { state: 'held', by: held };
  if (held === 'invalid' && !(await olderThan(file, BREAKER_MAX_AGE_MS))) return { state: 'unreadable' };
  await breakStale(file, held);
  return { state: 'retry' };
}

/** Removes the lock if it is still `record`'s: one taken over meanwhile is left alone. */
export async function releaseLock(file: string, record: LockFileRecord): Promise<void> {
  const now = await readLockFile(file);
  if (now !== 'missing' && sameRecord(now, record)) await unlink(file).catch(() => undefined);
}

export async function readLockFile(file: string): Promise<LockFileRecord | 'missing' | 'invalid'> {
  let raw: string;
  try {
    raw = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw e;
  }
  try {
    return lockRecordOf(JSON.parse(raw)) ?? 'invalid';
  } catch {
    return 'invalid';
  }
}

async function breakStale(file: string, seen: LockFileRecord | 'invalid'): Promise<void> {
  const breaker = `${file}.breaking`;
  if (!(await createExclusive(breaker, JSON.stringify(newLockRecord())))) {
    // Someone else is breaking it. If that someone died mid-break, clear their breaker.
    const other = await readLockFile(breaker);
    const abandoned =
      (other !== 'missing' && other !== 'invalid' && !isPidAlive(other.pid)) ||
      (await olderThan(breaker, BREAKER_MAX_AGE_MS));
    if (abandoned) await unlink(breaker).catch(() => undefined);
    await sleep(15 + Math.random() * 30);
    return;
  }
  try {
    // Re-check under the breaker: another process may have broken it and taken the lock since we looked.
    const now = await readLockFile(file);
    if (now !== 'missing' && sameRecord(now, seen)) await unlink(file).catch(() => undefined);
  } finally {
    await unlink(breaker).catch(() => undefined);
  }
}

function sameRecord(a: LockFileRecord | 'invalid', b: LockFileRecord | 'invalid'): boolean {
  if (a === 'invalid' || b === 'invalid') return a === b;
  return a.pid === b.pid && a.started === b.started && a.nonce === b.nonce;
}

export async function olderThan(file: string, ms: number): Promise<boolean> {
  try {
    return Date.now() - (await stat(file)).mtimeMs > ms;
  } catch {
    return false;
  }
}

// Locks this process holds, by file, so a clean exit that skipped release() leaves none behind.
const heldHere = new Map<string, LockFileRecord>();
let exitHookInstalled = false;

export function heldUntilExit(file: string, record: LockFileRecord | null): void {
  if (!record) {
    heldHere.delete(file);
    return;
  }
  heldHere.set(file, record);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const [held, mine] of heldHere) {
      try {
        const found = lockRecordOf(JSON.parse(readFileSync(held, 'utf8')));
        if (found && sameRecord(found, mine)) unlinkSync(held);
      } catch {
        // exiting anyway
      }
    }
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
