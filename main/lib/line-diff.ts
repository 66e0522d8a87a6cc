/**
 * A compact line diff for previews: long content is shown as the changed
 * hunks only (with a line of context), old lines on the "before" side and
 * new lines on the "after" side, so a person can compare them side by side.
 * The diff itself is the one the console uses too (main/contract/line-diff.ts).
 */
import { HUNK_MARK, hunkHeader } from '../contract/diff-format.ts';
import { diffLines } from '../contract/line-diff.ts';

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
