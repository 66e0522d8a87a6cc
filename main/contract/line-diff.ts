/**
 * The one line diff (longest common subsequence) of the service and the console: the
 * compact hunks a preview carries are built on it (main/lib/line-diff.ts), and the
 * console diffs a long text field with it when the preview brings no hunks
 * (renderer/screens/approvals/line-diff.ts). Removed lines come before the added
 * lines that replace them, as in a unified diff.
 */

export type DiffOp = { op: ' ' | '-' | '+'; text: string; oldNo: number | null; newNo: number | null };

/** Beyond this many cells (changed lines before × after) the LCS table is not built. */
export const MAX_LCS_CELLS = 2_000_000;

/**
 * The diff of two texts line by line, or null when the part between their common head and tail
 * is larger than `maxCells` (before × after lines) to compare.
 */
export const diffLinesWithin = (before: string, after: string, maxCells: number): DiffOp[] | null =>
  run(before, after, maxCells, false);

/** The diff of two texts line by line; past MAX_LCS_CELLS the changed middle is shown as replaced whole. */
export const diffLines = (before: string, after: string): DiffOp[] => run(before, after, MAX_LCS_CELLS, true)!;

function run(before: string, after: string, maxCells: number, replaceWhenTooBig: boolean): DiffOp[] | null {
  const a = before.split('\n');
  const b = after.split('\n');
  // Trim the common head and tail first: most edits touch a few lines.
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const am = a.slice(pre, a.length - suf);
  const bm = b.slice(pre, b.length - suf);
  const tooBig = am.length * bm.length > maxCells;
  if (tooBig && !replaceWhenTooBig) return null;

  const ops: DiffOp[] = [];
  for (let i = 0; i < pre; i++) ops.push({ op: ' ', text: a[i] ?? '', oldNo: i + 1, newNo: i + 1 });
  let oi = pre;
  let ni = pre;
  const del = (t: string) => ops.push({ op: '-', text: t, oldNo: ++oi, newNo: null });
  const add = (t: string) => ops.push({ op: '+', text: t, oldNo: null, newNo: ++ni });
  const same = (t: string) => ops.push({ op: ' ', text: t, oldNo: ++oi, newNo: ++ni });

  if (tooBig) {
    am.forEach(del);
    bm.forEach(add);
    for (let k = a.length - suf; k < a.length; k++) same(a[k] ?? '');
    return ops;
  }
  // lcs[i][j] = length of the LCS of am[i..] and bm[j..]
  const w = bm.length + 1;
  const lcs = new Uint32Array((am.length + 1) * w);
  for (let i = am.length - 1; i >= 0; i--) {
    for (let j = bm.length - 1; j >= 0; j--) {
      lcs[i * w + j] =
        am[i] === bm[j]
          ? (lcs[(i + 1) * w + j + 1] ?? 0) + 1
          : Math.max(lcs[(i + 1) * w + j] ?? 0, lcs[i * w + j + 1] ?? 0);
    }
  }
  let i = 0;
  let j = 0;
  while (i < am.length && j < bm.length) {
    if (am[i] === bm[j]) {
      same(am[i] ?? '');
      i++;
      j++;
    } else if ((lcs[(i + 1) * w + j] ?? 0) >= (lcs[i * w + j + 1] ?? 0)) del(am[i++] ?? '');
    else add(bm[j++] ?? '');
  }
  while (i < am.length) del(am[i++] ?? '');
  while (j < bm.length) add(bm[j++] ?? '');
  for (let k = a.length - suf; k < a.length; k++) same(a[k] ?? '');
  return ops;
}
