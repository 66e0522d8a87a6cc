/**
 * Opaque page cursors: base64url JSON of one non-negative number (an offset
 * or a last-seen id). A cursor that is not one of ours is refused by the
 * caller with a 400, never trusted.
 */
export const encodeCursor = (n: number): string => Buffer.from(JSON.stringify({ o: n })).toString('base64url');

export function decodeCursor(c: string | undefined, max = Number.MAX_SAFE_INTEGER): number | null {
  if (!c) return 0;
  try {
    const o = (JSON.parse(Buffer.from(c, 'base64url').toString('utf8')) as { o?: unknown }).o;
    if (typeof o === 'number' && Number.isSafeInteger(o) && o >= 0 && o <= max) return o;
  } catch {
    // not ours
  }
  return null;
}
