import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { link, open, readdir, rename, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isPidAlive } from './pid-alive.ts';
import { GatehouseError } from '../core/errors.ts';

/**
 * Crash-safe file replacement shared by every adapter in main/store.
 *
 * The data goes to a uniquely named temp file in the same folder, created with
 * the final mode from its first byte (no window where a secret sits in a 0644
 * file), is fsynced, and is renamed over the target. rename() is atomic on one
 * file system, so a reader sees the old file or the new one, never a half file,
 * even when the writer is killed mid-write. The folder is fsynced afterwards so
 * the rename itself survives a power cut (best effort: not possible on Windows).
 */

const TEMP_MARK = '.tmp-';

export function tempPrefix(file: string): string {
  return `.${basename(file)}${TEMP_MARK}`;
}

export async function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  opts: { mode?: number } = {},
): Promise<void> {
  const mode = opts.mode ?? 0o600;
  const temp = join(dirname(file), `${tempPrefix(file)}${process.pid}-${randomBytes(6).toString('hex')}`);
  const handle = await open(temp, 'wx', mode);
  try {
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await renameWithRetry(temp, file);
  } catch (e) {
    await unlink(temp).catch(() => undefined);
    throw e;
  }
  await syncDir(dirname(file));
}

/** Windows refuses to rename over a file another process has open for a moment; retry briefly. */
async function renameWithRetry(from: string, to: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await rename(from, to);
      return;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (process.platform !== 'win32' || attempt >= 10 || (code !== 'EPERM' && code !== 'EACCES' && code !== 'EBUSY'))
        throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

async function syncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  try {
    const h = await open(dir, 'r');
    try {
      await h.sync();
    } finally {
      await h.close();
    }
  } catch {
    // Some file systems refuse fsync on a directory; the rename is still atomic.
  }
}

/** Temp files left by a writer that was killed between open and rename. */
export async function removeStaleTemps(file: string): Promise<number> {
  const dir = dirname(file);
  const prefix = tempPrefix(file);
  let removed = 0;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    // The temp of a writer that is still alive (this process included) may be in flight.
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (isPidAlive(pid)) continue;
    await unlink(join(dir, name)).then(
      () => removed++,
      () => undefined,
    );
  }
  return removed;
}

/**
 * Creates the folder private to the user (0700); an existing folder is left
 * as it is. A path that is a file, or under one, or that the user may not
 * create, is an invalid_value error that says so (never a stack trace).
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  try {
    // Synchronous: nearly always a folder that exists (one system call), and the CLI's vault opens it before every
    // command it sends a running service, where the promise API of node:fs would cost about a millisecond to load.
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'EEXIST'
        ? 'is a file, not a folder'
        : code === 'ENOTDIR'
          ? 'is inside a file, not a folder'
          : code === 'EACCES' || code === 'EPERM'
            ? 'cannot be created or opened by this user (permission denied)'
            : code === 'EROFS'
              ? 'is on a read-only file system'
              : null;
    if (!why) throw e;
    throw new GatehouseError('invalid_value', `the data folder ${dir} ${why}: choose another with --data-dir`, {
      path: dir,
    });
  }
}

/**
 * Creates `path` with `content` only if it does not exist yet. Written to a
 * temp file and hard-linked into place, so the file never exists half-written
 * or without its content (a lock is never seen without its owner pid).
 */
export async function createExclusive(path: string, content: string): Promise<boolean> {
  const temp = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  let written = false;
  try {
    // Inside the try: on a full disk the temp is created and its write refused, and it must not stay behind.
    await writeFile(temp, content, { mode: 0o600, flag: 'wx' });
    written = true;
    await link(temp, path);
    return true;
  } catch (e) {
    if (written && (e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}
