import { GatehouseError } from '../core/errors.ts';
import type { Result } from '../contract/errors.ts';

export class UsageError extends Error {}

/** Prints data (JSON with --json, else the human form) or fails with the result's error. */
export function unwrap<T>(r: Result<T>): T {
  if (!r.ok) throw new GatehouseError(r.code, r.message, r.details ?? {});
  return r.data;
}

export function table(rows: Array<Record<string, unknown>>, columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join('\n');
}
