/**
 * The compact diff a plugin puts in a preview's `before`/`after` when a long
 * text changed: hunks that start with "@@ line N @@", changed lines marked
 * "- " (before) and "+ " (after), context lines "  ". Written by the site
 * plugin (compactDiff), read by the console (it colours such text instead of
 * diffing it again). One definition, so the two sides cannot drift apart.
 */

export const hunkHeader = (line: number): string => `@@ line ${line} @@`;

export type HunkLineKind = 'header' | 'del' | 'add' | 'same';
export const HUNK_MARK = { del: '- ', add: '+ ', same: '  ' } as const;

const HEADER = /^@@ .* @@$/m;

/** Whether a preview value is already such a compact diff. */
export const isHunkText = (v: unknown): v is string => typeof v === 'string' && HEADER.test(v);

export function hunkLineKind(line: string): HunkLineKind {
  if (line.startsWith('@@')) return 'header';
  if (line.startsWith(HUNK_MARK.del)) return 'del';
  if (line.startsWith(HUNK_MARK.add)) return 'add';
  return 'same';
}
