import { link, rename, stat, unlink } from 'node:fs/promises';

/** `20250131T235959Z`: sorts by time and is safe in a file name on every platform. */
export function backupStamp(date: Date): string {
  return date
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
}

/**
 * Moves a file we could not use to `<file>.corrupt-<stamp>` (with `-2`, `-3`...
 * when that name is taken) and returns the new path. Never replaces an existing
 * backup: link() fails instead of overwriting, unlike rename().
 */
export async function moveAside(file: string, now: Date = new Date()): Promise<string> {
  const base = `${file}.corrupt-${backupStamp(now)}`;
  for (let n = 1; n < 1000; n++) {
    const target = n === 1 ? base : `${base}-${n}`;
    try {
      await link(file, target);
      await unlink(file);
      return target;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      // No hard links here (some network or FAT file systems): check, then rename.
      if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EXDEV' || code === 'ENOSYS') {
        const taken = await stat(target).then(
          () => true,
          () => false,
        );
        if (taken) continue;
        await rename(file, target);
        return target;
      }
      throw e;
    }
  }
  throw new Error(`too many backups named ${base}-*`);
}
