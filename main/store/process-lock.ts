import { randomBytes } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import { readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { GatehouseError } from '../core/errors.ts';
import { createExclusive, ensurePrivateDir } from './atomic-write.ts';
import { isPidAlive } from './pid-alive.ts';

/**
 * One process writes the store: the running service holds this lock; the CLI
 * talks to that service when there is one, or takes the lock itself.
 *
 * The lock file appears complete or not at all: its content is written to a
 * temp file that is then hard-linked to `gatehouse.lock` (link fails when the
 * name exists, like 'wx', but no reader ever sees an empty lock). A lock whose
 * pid is gone is stale; breaking it is guarded by a second, short-lived lock so
 * two processes can never both "break" and then both hold it.
 */

export const LOCK_FILE = 'gatehouse.lock';
const BREAKER_FILE = 'gatehouse.lock.breaking';
// A breaker lives for milliseconds; one older than this was left by a process that died mid-break.
const BREAKER_MAX_AGE_MS = 10_000;

export type LockOwnerKind = 'service' | 'cli';

const LockRecord = z.object({
  pid: z.number().int(),
  owner: z.enum(['service', 'cli']),
  started: z.string(),
  nonce: z.string().optional(),
});
export type LockRecord = z.infer<typeof LockRecord>;

export interface LockHandle {
  readonly pid: number;
  readonly file: string;
  /** Removes the lock if it is still ours. Safe to call twice. */
  release(): Promise<void>;
}

export async function acquireLock(dataDir: string, owner: LockOwnerKind): Promise<LockHandle> {
  await ensurePrivateDir(dataDir);
  const file = join(dataDir, LOCK_FILE);
  const record: LockRecord = { pid: process.pid, owner, started: new Date().toISOString(), nonce: randomBytes(9).toString('base64url') };

  let lastSeen: LockRecord | 'invalid' | 'missing' = 'missing';
  for (let attempt = 0; attempt < 20; attempt++) {
    if (await createExclusive(file, JSON.stringify(record))) return handleFor(file, record);
    const held = await readRecord(file);
    lastSeen = held;
    if (held === 'missing') continue; // released between our create and our read: try again
    if (held !== 'invalid' && isPidAlive(held.pid)) throw lockedError(dataDir, file, held);
    // Stale (dead pid) or unreadable and old: break it, under the breaker lock.
    if (held === 'invalid' && !(await olderThan(file, BREAKER_MAX_AGE_MS))) {
      await sleep(20 + attempt * 10);
      continue;
    }
    await breakStale(dataDir, file, held);
  }
  if (lastSeen === 'invalid') {
    throw new GatehouseError('store_locked', `${file} is not a lock file Gatehouse wrote; if no Gatehouse process is running, delete it and try again`);
  }
  throw new GatehouseError('store_locked', `could not take the lock ${file}: it keeps changing hands; try again`);
}

/** Who holds the lock, if anyone: `alive` false means a stale lock that the next acquirer takes over. */
export async function readLockOwner(dataDir: string): Promise<(LockRecord & { alive: boolean }) | null> {
  const held = await readRecord(join(dataDir, LOCK_FILE));
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
    `another Gatehouse process (pid ${held.pid}, ${held.owner}) holds ${dataDir}; ${hint}. If no Gatehouse process is running, delete ${file}.`,
    { pid: held.pid, owner: held.owner, started: held.started },
  );
}


async function readRecord(file: string): Promise<LockRecord | 'missing' | 'invalid'> {
  let raw: string;
  try {
    raw = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw e;
  }
  try {
    const parsed = LockRecord.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : 'invalid';
  } catch {
    return 'invalid';
  }
}

async function breakStale(dataDir: string, file: string, seen: LockRecord | 'invalid'): Promise<void> {
  const breaker = join(dataDir, BREAKER_FILE);
  const me: LockRecord = { pid: process.pid, owner: 'cli', started: new Date().toISOString(), nonce: randomBytes(9).toString('base64url') };
  if (!(await createExclusive(breaker, JSON.stringify(me)))) {
    // Someone else is breaking it. If that someone died mid-break, clear their breaker.
    const other = await readRecord(breaker);
    const abandoned = (other !== 'missing' && other !== 'invalid' && !isPidAlive(other.pid)) || (await olderThan(breaker, BREAKER_MAX_AGE_MS));
    if (abandoned) await unlink(breaker).catch(() => undefined);
    await sleep(15 + Math.random() * 30);
    return;
  }
  try {
    // Re-check under the breaker: another process may have broken it and taken the lock since we looked.
    const now = await readRecord(file);
    if (now !== 'missing' && sameRecord(now, seen)) await unlink(file).catch(() => undefined);
  } finally {
    await unlink(breaker).catch(() => undefined);
  }
}

function sameRecord(a: LockRecord | 'invalid', b: LockRecord | 'invalid'): boolean {
  if (a === 'invalid' || b === 'invalid') return a === b;
  return a.pid === b.pid && a.started === b.started && a.nonce === b.nonce;
}

async function olderThan(file: string, ms: number): Promise<boolean> {
  try {
    return Date.now() - (await stat(file)).mtimeMs > ms;
  } catch {
    return false;
  }
}

// Locks this process holds, by file, so a clean exit can drop them.
const heldHere = new Map<string, LockRecord>();
let exitHookInstalled = false;

function handleFor(file: string, record: LockRecord): LockHandle {
  heldHere.set(file, record);
  installExitHook();
  let released = false;
  return {
    pid: record.pid,
    file,
    async release() {
      if (released) return;
      released = true;
      heldHere.delete(file);
      const now = await readRecord(file);
      if (now !== 'missing' && sameRecord(now, record)) await unlink(file).catch(() => undefined);
    },
  };
}

/** A clean exit that skipped release() leaves no lock behind; a crash leaves a stale one that the next acquirer takes over. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const [file, record] of heldHere) {
      try {
        const parsed = LockRecord.safeParse(JSON.parse(readFileSync(file, 'utf8')));
        if (parsed.success && sameRecord(parsed.data, record)) unlinkSync(file);
      } catch {
        // exiting anyway
      }
    }
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
