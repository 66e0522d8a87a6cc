/**
 * Whether a process with this pid exists. Signal 0 checks without sending
 * anything; EPERM means it exists but belongs to someone else (still alive).
 * A recycled pid reads as alive: callers say so in their messages.
 */
export function isPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
