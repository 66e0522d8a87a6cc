import { maskSecretText } from '../../lib/secret-scan.ts';

/**
 * The shape of a call's arguments, for the audit of upstream calls: field
 * names and JSON types, never a value (`{path:string,opts:{force:boolean},
 * lines:[number]}`). Bounded in depth, fields and length; keys are a client's
 * text, so the auditor bounds and cleans the result like any such string, and
 * a key that looks like a secret (a token used as a map key) is masked like a
 * value would be, so it never reaches the audit or its exports.
 */
const MAX_DEPTH = 4;
const MAX_KEYS = 30;

export function argsShape(v: unknown, depth = 0): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return depth >= MAX_DEPTH ? '[…]' : `[${v.length ? argsShape(v[0], depth + 1) : ''}]`;
  if (typeof v === 'object') {
    if (depth >= MAX_DEPTH) return '{…}';
    const keys = Object.keys(v as object);
    const parts = keys
      .slice(0, MAX_KEYS)
      .map((k) => `${maskSecretText(k)}:${argsShape((v as Record<string, unknown>)[k], depth + 1)}`);
    return `{${parts.join(',')}${keys.length > MAX_KEYS ? ',…' : ''}}`;
  }
  return typeof v;
}
