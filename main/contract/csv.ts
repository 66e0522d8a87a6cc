/**
 * One CSV cell (RFC 4180), for every export the app and the cloud make (the
 * audit export the service streams, to a browser, the CLI or the desktop app,
 * the cloud's request log and usage reports): quoted when needed, and text a
 * spreadsheet would run as a formula defused with a leading '. Spreadsheets
 * skip leading whitespace and read the full-width and small forms of = + - @
 * as the ASCII ones, so those count too, after any run of whitespace or
 * invisible format characters; a tab, CR or LF first is defused as well.
 */
const FORMULA = /^[\s\p{Cf}]*[=+\-@\uff1d\uff0b\uff0d\uff20\ufe66\ufe62\ufe63\ufe6b]|^[\t\r\n]/u;

export function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v !== 'string') return String(v);
  const s = FORMULA.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** One CSV record of such cells, CRLF-terminated. */
export const csvRow = (cells: readonly unknown[]): string => `${cells.map(csvCell).join(',')}\r\n`;
