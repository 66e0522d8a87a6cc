/**
 * A compact line diff for previews: long content is shown as the changed
 * hunks only (with a line of context), old lines on the "before" side and
 * new lines on the "after" side, so a person can compare them side by side.
 */
import { HUNK_MARK, hunkHeader } from '../contract/diff-format.ts';

export type DiffOp = { op: ' ' | '-' | '+'; text: string; oldNo: number | null; newNo: number | null };

/** Beyond this many cells the LCS table is skipped and the middle is shown as replaced. */
const MAX_LCS_CELLS = 2_000_000;

export function diffLines(before: string, after: string): DiffOp[] {
  const a = before.split('\n');
  const b = after.split('\n');
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const am = a.slice(pre, a.length - suf);
  const bm = b.slice(pre, b.length - suf);

  const ops: DiffOp[] = [];
  for (let i = 0; i < pre; i++) ops.push({ op: ' ', text: a[i] ?? '', oldNo: i + 1, newNo: i + 1 });
  let oi = pre;
  let ni = pre;
  const del = (t: string) => ops.push({ op: '-', text: t, oldNo: ++oi, newNo: null });
  const add = (t: string) => ops.push({ op: '+', text: t, oldNo: null, newNo: ++ni });
  const same = (t: string) => ops.push({ op: ' ', text: t, oldNo: ++oi, newNo: ++ni });

  if (am.length * bm.length > MAX_LCS_CELLS) {
    am.forEach(del);
    bm.forEach(add);
  } else {
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
  }
  for (let k = a.length - suf; k < a.length; k++) same(a[k] ?? '');
  return ops;
}

const clip = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/**
 * Changed hunks as two texts. Each hunk starts with "@@ line N @@"; changed
 * lines are marked "- " (before) and "+ " (after), context lines "  ".
 */
export function compactDiff(
  before: string,
  after: string,
  opts: { context?: number; maxLines?: number; maxLineChars?: number } = {},
): { before: string; after: string; changed_lines: number; removed: number; added: number } {
  const context = opts.context ?? 1;
  const maxLines = opts.maxLines ?? 40;
  const maxLineChars = opts.maxLineChars ?? 160;
  const ops = diffLines(before, after);
  const keep = new Array<boolean>(ops.length).fill(false);
  ops.forEach((o, k) => {
    if (o.op === ' ') return;
    for (let c = Math.max(0, k - context); c <= Math.min(ops.length - 1, k + context); c++) keep[c] = true;
  });
  const left: string[] = [];
  const right: string[] = [];
  let changed = 0;
  let shown = 0;
  let hidden = 0;
  let inHunk = false;
  ops.forEach((o, k) => {
    if (o.op !== ' ') changed++;
    if (!keep[k]) {
      inHunk = false;
      return;
    }
    if (shown >= maxLines) {
      if (o.op !== ' ') hidden++;
      return;
    }
    if (!inHunk) {
      left.push(
        hunkHeader(
          o.oldNo ??
            (ops
              .slice(0, k)
              .reverse()
              .find((x) => x.oldNo)?.oldNo ?? 0) + 1,
        ),
      );
      right.push(
        hunkHeader(
          o.newNo ??
            (ops
              .slice(0, k)
              .reverse()
              .find((x) => x.newNo)?.newNo ?? 0) + 1,
        ),
      );
      inHunk = true;
    }
    const text = clip(o.text, maxLineChars);
    if (o.op !== '+') left.push(`${o.op === '-' ? HUNK_MARK.del : HUNK_MARK.same}${text}`);
    if (o.op !== '-') right.push(`${o.op === '+' ? HUNK_MARK.add : HUNK_MARK.same}${text}`);
    shown++;
  });
  if (hidden) {
    left.push(`… ${hidden} more changed line(s) not shown`);
    right.push(`… ${hidden} more changed line(s) not shown`);
  }
  const removed = ops.filter((o) => o.op === '-').length;
  return {
    before: left.join('\n'),
    after: right.join('\n'),
    changed_lines: changed,
    removed,
    added: changed - removed,
  };
}
