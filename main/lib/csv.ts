/**
 * CSV cells (RFC 4180) that are safe to open in a spreadsheet: a spreadsheet
 * runs a cell that starts with = + - @ (and, in some, a tab or carriage
 * return) as a formula, so such text gets a leading apostrophe and shows as
 * text; a value someone else chose (a page title, a site name) cannot run in
 * the reader's spreadsheet. Numbers and booleans are ours and stay as they are.
 */
export function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v !== 'string') return String(v);
  let s = v;
  const c = s.charCodeAt(0);
  if (c === 61 || c === 43 || c === 45 || c === 64 || c === 9 || c === 13) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** One CSV record, CRLF-terminated. */
export const csvRow = (cells: readonly unknown[]): string => `${cells.map(csvCell).join(',')}\r\n`;
