import { describe, expect, it } from 'vitest';
import { diffLines } from '../../main/contract/line-diff.ts';
import { lineDiff, withContext } from '../../renderer/screens/approvals/line-diff.ts';

describe('line diff', () => {
  it('marks changed lines and keeps the rest', () => {
    expect(lineDiff('a\nb\nc', 'a\nB\nc\nd')).toEqual([
      { op: 'same', text: 'a' },
      { op: 'del', text: 'b' },
      { op: 'add', text: 'B' },
      { op: 'same', text: 'c' },
      { op: 'add', text: 'd' },
    ]);
    expect(lineDiff('same', 'same')).toEqual([{ op: 'same', text: 'same' }]);
  });

  it("is the service's diff (main/contract/line-diff.ts): the same lines in the same order", () => {
    const pairs: Array<[string, string]> = [
      ['a\nb\nc', 'a\nB\nc\nd'],
      ['one\ntwo\nthree\nfour', 'zero\none\nthree\n4\nfive'],
      ['x\ny\nx\ny', 'y\nx\ny\nx'],
      ['', 'new\nlines'],
      ['gone\n', ''],
    ];
    const mark = { ' ': 'same', '+': 'add', '-': 'del' } as const;
    for (const [before, after] of pairs)
      expect(lineDiff(before, after), JSON.stringify([before, after])).toEqual(
        diffLines(before, after).map((o) => ({ op: mark[o.op], text: o.text })),
      );
  });

  it('gives up (null) on texts too big to compare cheaply', () => {
    const a = Array.from({ length: 600 }, (_, i) => `a${i}`).join('\n');
    const b = Array.from({ length: 600 }, (_, i) => `b${i}`).join('\n');
    expect(lineDiff(a, b)).toBeNull();
    // a small edit in a big text is cheap: the common head and tail are trimmed first
    const big = Array.from({ length: 5000 }, (_, i) => `line ${i}`);
    const edited = [...big];
    edited[2500] = 'changed';
    expect(lineDiff(big.join('\n'), edited.join('\n'))!.filter((l) => l.op !== 'same')).toHaveLength(2);
  });

  it('collapses long unchanged runs around the changes', () => {
    const lines = lineDiff(
      Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n'),
      Array.from({ length: 20 }, (_, i) => (i === 10 ? 'X' : `l${i}`)).join('\n'),
    )!;
    const shown = withContext(lines, 1);
    expect(shown[0]).toEqual({ op: 'skip', count: 9 });
    expect(shown.at(-1)).toEqual({ op: 'skip', count: 8 });
    expect(shown.filter((l) => l.op !== 'skip')).toHaveLength(4);
  });
});
