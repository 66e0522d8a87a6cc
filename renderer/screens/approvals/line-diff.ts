import { diffLinesWithin } from '../../../main/contract/line-diff.ts';

export type DiffLine = { op: 'same' | 'add' | 'del'; text: string };

/** Above this many line pairs the LCS table gets too big to be worth it in the console; show before/after instead. */
const MAX_CELLS = 250_000;
const OP = { ' ': 'same', '+': 'add', '-': 'del' } as const;

/**
 * A line diff for long text fields such as a page body (the service's own,
 * main/contract/line-diff.ts), or null when the texts are too big to compare cheaply.
 */
export function lineDiff(before: string, after: string): DiffLine[] | null {
  return diffLinesWithin(before, after, MAX_CELLS)?.map((o) => ({ op: OP[o.op], text: o.text })) ?? null;
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
