import { heldUntilExit, newLockRecord, releaseLock, sleep, tryLock } from './lock-file.ts';

/**
 * A short cross-process critical section around a read-modify-write of a small
 * file (the file vault, which the service, the CLI and the bridge all touch),
 * on the same lock primitive as the data dir's process lock (lock-file.ts): a
 * holder whose pid is gone is broken under a guard, so two processes never
 * both hold it; a live holder is waited for until `timeoutMs`.
 */
export async function withFileMutex<R>(
  path: string,
  fn: () => Promise<R>,
  opts: { timeoutMs?: number } = {},
): Promise<R> {
  const timeoutMs = opts.timeoutMs ?? 5_000;
  const record = newLockRecord();
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    const got = await tryLock(path, record);
    if (got.state === 'taken') break;
    if (Date.now() > deadline)
      throw new Error(
        `${path} stayed locked for ${timeoutMs} ms${got.state === 'held' ? ` (by pid ${got.by.pid})` : ''}`,
      );
    if (got.state !== 'retry') await sleep(Math.min(5 + attempt * 5, 50));
  }
  heldUntilExit(path, record);
  try {
    return await fn();
  } finally {
    heldUntilExit(path, null);
    await releaseLock(path, record);
  }
}
