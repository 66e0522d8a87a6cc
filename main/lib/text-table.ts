import { showControls } from '../contract/text.ts';

/**
 * A plain-text table for CLI output: upper-case headers, padded columns, `-`
 * for empty cells, `(none)` for no rows. Cells often hold what clients sent:
 * control and direction-changing characters are shown escaped (showControls).
 */
export function table(rows: Array<Record<string, unknown>>, columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cell = (v: unknown) =>
    showControls(v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join(
    '\n',
  );
}
