import { GatehouseError } from '../core/errors.ts';
import type { Result } from '../contract/errors.ts';

export class UsageError extends Error {}

/** Prints data (JSON with --json, else the human form) or fails with the result's error. */
export function unwrap<T>(r: Result<T>): T {
  if (!r.ok) throw new GatehouseError(r.code, r.message, r.details ?? {});
  return r.data;
}

export { table } from '../lib/text-table.ts';
