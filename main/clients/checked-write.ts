import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { GatehouseError } from '../core/errors.ts';
import { ensurePrivateDir, writeFileAtomic } from '../store/atomic-write.ts';
import { withFileMutex } from '../store/file-mutex.ts';
import { sha256 } from './config-file.ts';

/**
 * Writes a client's config file only if it is still the file that was read:
 * clients rewrite their own files while they run (Claude Code rewrites
 * ~/.claude.json all the time), so the bytes are read again and their hash
 * compared just before the write, under a lock that keeps two Gatehouse
 * commands apart (the lock lives in the data dir: nothing is left beside the
 * client's file). The write goes to the symlink's target, through a temp file
 * and a rename, with the file's own mode.
 */
export async function writeIfUnchanged(
  dataDir: string,
  target: { file: string; real: string; hash: string },
  text: string,
): Promise<void> {
  const locks = join(dataDir, 'client-backups', 'locks');
  await ensurePrivateDir(locks);
  const lock = join(locks, `${sha256(target.real).slice('sha256:'.length, 'sha256:'.length + 24)}.lock`);
  await withFileMutex(lock, async () => {
    let now: Buffer;
    let mode: number;
    try {
      now = await readFile(target.real);
      mode = (await stat(target.real)).mode & 0o777;
    } catch (e) {
      throw new GatehouseError(
        'conflict',
        `${target.file} went away while Gatehouse was changing it (${(e as NodeJS.ErrnoException).code}); nothing was written`,
        { path: target.file },
      );
    }
    if (sha256(now) !== target.hash)
      throw new GatehouseError(
        'conflict',
        `${target.file} changed while Gatehouse was changing it (its client rewrote it?); nothing was written: run the command again`,
        { path: target.file },
      );
    await writeFileAtomic(target.real, text, { mode });
  });
}
