/**
 * Client-supplied strings (tool names, page titles, client names, targets)
 * shown to a person: control characters, bidi overrides and lone surrogates
 * are made visible as `\u{…}` escapes instead of being rendered, so a name
 * cannot fake a line break, hide text or reorder what is on screen. Used by
 * the console; the CLI can print the same.
 */

// C0 and C1 controls, DEL, bidi embeddings/overrides/isolates, line/paragraph separators, and lone surrogates.
const UNSAFE =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export function showControls(s: string): string {
  return s.replace(UNSAFE, (c) => `\\u{${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}}`);
}

/** `showControls` for a value that may be missing. */
export const shown = (s: string | null | undefined): string => (s == null ? '' : showControls(s));

/**
 * `showControls` for multi-line text shown in a `<pre>` (a page body, a preview
 * diff): the line breaks stay line breaks (CRLF and LF alike), every other
 * control character, bidi control and lone surrogate is made visible.
 */
export const showControlsByLine = (s: string): string => s.split(/\r?\n/).map(showControls).join('\n');
