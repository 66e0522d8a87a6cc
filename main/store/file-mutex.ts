import { randomBytes } from 'node:crypto';
import { createExclusive } from './atomic-write.ts';
import { readFile, stat, unlink } from 'node:fs/promises';
import { isPidAlive } from './pid-alive.ts';

/**
 * A short cross-process critical section around a read-modify-write of a small
 * file (the file vault, which the service, the CLI and the bridge all touch).
 * The mutex file holds the owner's pid; one whose pid is gone, or older than
 * `staleMs`, was abandoned and is removed.
 */
export async function withFileMutex<R>(path: string, fn: () => Promise<R>, opts: { timeoutMs?: number; staleMs?: number } = {}): Promise<R> {
  const timeoutMs = opts.timeoutMs ?? 5_000;
  const staleMs = opts.staleMs ?? 10_000;
  const mine = `${process.pid}:${randomBytes(6).toString('hex')}`;
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    if (await createExclusive(path, mine)) break;
    if (await abandoned(path, staleMs)) {
      await unlink(path).catch(() => undefined);
      continue;
    }
    if (Date.now() > deadline) throw new Error(`${path} stayed locked for ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, Math.min(5 + attempt * 5, 50)));
  }
  try {
    return await fn();
  } finally {
    const now = await readFile(path, 'utf8').catch(() => null);
    if (now === mine) await unlink(path).catch(() => undefined);
  }
}

async function abandoned(path: string, staleMs: number): Promise<boolean> {
  try {
    const [content, info] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
    const pid = Number(content.split(':')[0]);
    return !isPidAlive(pid) || Date.now() - info.mtimeMs > staleMs;
  } catch {
    return false;
  }
}
