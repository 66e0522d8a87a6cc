/**
 * One CSV cell (RFC 4180), for the audit export the service streams and the
 * one the desktop console builds itself: quoted when needed, and text a
 * spreadsheet would run as a formula (= + - @, a tab or CR first) defused
 * with a leading '.
 */
export function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v !== 'string') return String(v);
  let s = v;
  const c = s.charCodeAt(0);
  if (c === 61 || c === 43 || c === 45 || c === 64 || c === 9 || c === 13) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** One CSV record of such cells, CRLF-terminated. */
export const csvRow = (cells: readonly unknown[]): string => `${cells.map(csvCell).join(',')}\r\n`;
