import { GatehouseError } from '../core/errors.ts';
import type { Result } from '../contract/errors.ts';
import { showControls } from '../contract/text.ts';

export { UsageError } from '../lib/cli-kit.ts';

/** Prints data (JSON with --json, else the human form) or fails with the result's error. */
export function unwrap<T>(r: Result<T>): T {
  if (!r.ok) throw new GatehouseError(r.code, r.message, r.details ?? {});
  return r.data;
}

export { table } from '../lib/text-table.ts';

/** Client text for the terminal: controls, bidi overrides and lone surrogates shown as escapes (main/contract/text.ts). */
export const printable = (value: unknown): string => showControls(typeof value === 'string' ? value : String(value));

/** A template tag: every interpolated value goes through `printable`; the literal parts are ours. */
export function safe(strings: TemplateStringsArray, ...values: unknown[]): string {
  return strings.reduce((text, part, i) => text + part + (i < values.length ? printable(values[i]) : ''), '');
}
