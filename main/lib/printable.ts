// C0 and C1 controls, DEL, bidi marks/overrides/isolates and line/paragraph separators: each can move the
// cursor, rewrite what is already on the screen, or reorder what follows in a terminal.
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Text from clients (tool names, page titles, client names, labels) made
 * safe for a terminal: every control or direction-changing character, and
 * every lone surrogate, shown as a visible `\xNN` / `\uNNNN` escape instead
 * of acting on the terminal. Normal text, accents and emoji pass unchanged.
 */
export function printable(value: unknown): string {
  const s = typeof value === 'string' ? value : String(value);
  return s.replace(UNPRINTABLE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** A template tag: every interpolated value goes through `printable`; the literal parts are ours. */
export function safe(strings: TemplateStringsArray, ...values: unknown[]): string {
  return strings.reduce((text, part, i) => text + part + (i < values.length ? printable(values[i]) : ''), '');
}
