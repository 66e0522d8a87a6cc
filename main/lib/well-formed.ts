/**
 * Lone UTF-16 surrogates (half of a pair, e.g. from a client that cut a
 * string in the middle of an emoji) are legal in a JS string but not in
 * UTF-8 or in strict JSON: JSON.stringify writes them as `\udXXX` escapes,
 * which jq and other strict parsers refuse. Everything Gatehouse writes to
 * disk goes through one of these, so every file stays readable.
 */

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `s` with every lone surrogate replaced by U+FFFD. */
export function wellFormed(s: string): string {
  return s.replace(LONE_SURROGATE, '\ufffd');
}

// In JSON.stringify's output a `\udXXX` escape only ever stands for a lone
// surrogate (a valid pair is written as the characters themselves). The
// escape counts only when the backslash before it is not itself escaped.
const ESCAPED_SURROGATE = /(?<!\\)((?:\\\\)*)\\u[dD][89a-fA-F][0-9a-fA-F]{2}/g;

/** JSON.stringify whose output never carries a lone surrogate, in a key or a value. */
export function stringifyWellFormed(value: unknown, space?: number): string {
  const text = JSON.stringify(value, null, space);
  if (text === undefined) throw new TypeError('stringifyWellFormed: the value has no JSON form');
  return text.includes('\\u') ? text.replace(ESCAPED_SURROGATE, '$1\\ufffd') : text;
}
