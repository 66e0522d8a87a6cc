import type { FileHandle } from 'node:fs/promises';
import { peekAt } from './audit-filter.ts';

const WINDOW = 4096;
/** Below this span a backward scan is as cheap as more seeking. */
const GOOD_ENOUGH = 128 * 1024;

/**
 * In a file whose entry times only grow, finds a line start `cut` at or
 * before `end` such that every line from `cut` to `end` is at or after
 * `toMs`: a newest-first scan for an older time range starts at `cut` and
 * skips the rest unread. Binary search over byte offsets, a small read per
 * step. Returns `end` when it cannot tell (no readable time near a probe).
 */
export async function seekBeforeTime(fh: FileHandle, end: number, toMs: number): Promise<number> {
  let lo = 0;
  let hi = end;
  let cut = end;
  while (hi - lo > GOOD_ENOUGH) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const probe = await firstLineAfter(fh, mid, hi);
    if (probe === null) {
      hi = mid; // no line starts in [mid, hi): look lower
      continue;
    }
    if (probe.atMs === null) break;
    if (probe.atMs >= toMs) {
      cut = probe.start;
      hi = mid;
    } else {
      lo = probe.start + 1;
    }
  }
  return cut;
}

/** The first line starting after `pos` and before `limit`, with its time (null when the line has none). */
async function firstLineAfter(fh: FileHandle, pos: number, limit: number): Promise<{ start: number; atMs: number | null } | null> {
  let size = WINDOW;
  for (;;) {
    const len = Math.min(size, limit - pos);
    if (len <= 0) return null;
    const buf = Buffer.allocUnsafe(len);
    const { bytesRead } = await fh.read(buf, 0, len, pos);
    const data = buf.subarray(0, bytesRead);
    const nl = data.indexOf(10);
    if (nl < 0) {
      if (bytesRead < len || len < size) return null;
      size *= 4;
      continue;
    }
    const start = pos + nl + 1;
    if (start >= limit) return null;
    const lineEnd = data.indexOf(10, nl + 1);
    if (lineEnd < 0 && len === limit - pos) {
      // the window reached `limit`, which is a line boundary: the line ends there
    } else if (lineEnd < 0) {
      size *= 4;
      continue;
    }
    const at = peekAt(data, nl + 1, lineEnd < 0 ? data.length : lineEnd);
    const ms = at === null ? NaN : Date.parse(at);
    return { start, atMs: Number.isNaN(ms) ? null : ms };
  }
}
