/** The OS's code of a failed file operation (ENOSPC, EIO, ...), not its message: that one may name a path. */
export function errorCode(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? code.slice(0, 40) : 'write failed';
}

/** The disk itself refusing (full, over quota, failing, read-only): not a bug of ours, and over when space is back. */
const DISK_REFUSALS = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EROFS']);
export const isDiskRefusal = (e: unknown): boolean => DISK_REFUSALS.has(errorCode(e));
