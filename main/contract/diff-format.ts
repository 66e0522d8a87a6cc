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

/**
 * The two sides of a compact diff as one unified diff, for a terminal: each hunk's context lines once, its
 * removed lines before its added ones, the two headers as one (`@@ line 3 -> 3 @@`).
 */
export function unifiedLines(before: string | undefined, after: string | undefined): string[] {
  const hunks = (text: string | undefined): string[][] => {
    const out: string[][] = [];
    for (const line of (text ?? '').split('\n')) {
      if (hunkLineKind(line) === 'header' || !out.length) out.push([]);
      out[out.length - 1]!.push(line);
    }
    return out.filter((h) => h.length && (h.length > 1 || h[0] !== ''));
  };
  const left = hunks(before);
  const right = hunks(after);
  const out: string[] = [];
  for (let h = 0; h < Math.max(left.length, right.length); h++) {
    const l = left[h] ?? [];
    const r = right[h] ?? [];
    const lh = l[0] && hunkLineKind(l[0]) === 'header' ? l.shift()! : null;
    const rh = r[0] && hunkLineKind(r[0]) === 'header' ? r.shift()! : null;
    if (lh || rh) out.push(lh && rh ? `${lh.slice(0, -3)} -> ${rh.slice(8)}` : (lh ?? rh)!);
    let a = 0;
    let b = 0;
    while (a < l.length || b < r.length) {
      if (a < l.length && hunkLineKind(l[a]!) === 'del') out.push(l[a++]!);
      else if (b < r.length && hunkLineKind(r[b]!) === 'add') out.push(r[b++]!);
      else if (a < l.length && b < r.length && l[a] === r[b]) {
        out.push(l[a]!);
        a++;
        b++;
      } else if (a < l.length) out.push(l[a++]!);
      else out.push(r[b++]!);
    }
  }
  return out;
}
