import { clientText } from '../core/calls/client-text.ts';

/** Bidi embeddings, overrides, isolates and marks: not controls to clientText, but they reorder what a person reads. */
const BIDI = /[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text Gatehouse did not write itself (from the cloud gateway: warning
 * messages, quota names and reset times, release versions; from MCP clients:
 * tool names, summaries, client names) as a tray control or an OS
 * notification shows it: one line (every run of white space, line and
 * paragraph separators included, becomes one space), control characters,
 * lone surrogates and bidi formatting removed (`clientText`), and at most
 * `max` characters, an ellipsis marking a cut. The one place such text is
 * made fit for the tray menu (`menuLabel`) and the notifications.
 */
export function trayText(text: string, max: number): string {
  const head = text.length > max * 4 ? text.slice(0, max * 4) : text;
  const line = clientText(head.replace(/\s+/g, ' ').replace(BIDI, ''), max * 4)
    .replace(/ {2,}/g, ' ')
    .trim();
  if (line.length <= max) return line;
  let short = line.slice(0, max - 1);
  if (/[\ud800-\udbff]$/.test(short)) short = short.slice(0, -1);
  return `${short.trimEnd()}…`;
}
