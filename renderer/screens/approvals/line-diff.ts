export type DiffLine = { op: 'same' | 'add' | 'del'; text: string };

/** Above this many line pairs the LCS table gets too big to be worth it; show before/after instead. */
const MAX_CELLS = 250_000;

/**
 * A line diff (longest common subsequence) for long text fields such as a
 * page body, or null when the texts are too big to compare cheaply.
 */
export function lineDiff(before: string, after: string): DiffLine[] | null {
  const a = before.split('\n');
  const b = after.split('\n');
  // Trim the common head and tail first: most edits touch a few lines.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  if (midA.length * midB.length > MAX_CELLS) return null;

  const n = midA.length;
  const m = midB.length;
  const width = m + 1;
  const lcs = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * width + j] =
        midA[i] === midB[j]
          ? lcs[(i + 1) * width + j + 1]! + 1
          : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
    }
  }
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ op: 'same', text }));
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && midA[i] === midB[j]) {
      out.push({ op: 'same', text: midA[i]! });
      i++;
      j++;
    } else if (j < m && (i === n || lcs[i * width + j + 1]! >= lcs[(i + 1) * width + j]!)) {
      out.push({ op: 'add', text: midB[j]! });
      j++;
    } else {
      out.push({ op: 'del', text: midA[i]! });
      i++;
    }
  }
  for (const text of a.slice(a.length - tail)) out.push({ op: 'same', text });
  return out;
}

/** Long unchanged runs collapse to a few lines of context around each change. */
export function withContext(lines: DiffLine[], context = 2): (DiffLine | { op: 'skip'; count: number })[] {
  const keep = lines.map(() => false);
  lines.forEach((l, i) => {
    if (l.op === 'same') return;
    for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) keep[k] = true;
  });
  const out: (DiffLine | { op: 'skip'; count: number })[] = [];
  let skipped = 0;
  lines.forEach((l, i) => {
    if (keep[i]) {
      if (skipped) out.push({ op: 'skip', count: skipped });
      skipped = 0;
      out.push(l);
    } else skipped++;
  });
  if (skipped) out.push({ op: 'skip', count: skipped });
  return out;
}
