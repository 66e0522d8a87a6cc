import { describe, expect, it } from 'vitest';
import { BoundedLines, idAtEdges } from '../../../main/plugins/upstream/bounded-lines.ts';

describe('BoundedLines', () => {
  it('splits messages across chunks and drops one over the bound whole, keeping only its size and edges', () => {
    const b = new BoundedLines(64);
    expect(b.push(Buffer.from('{"a":1}\n{"b"'))).toEqual([{ kind: 'line', text: '{"a":1}' }]);
    expect(b.push(Buffer.from(':2}\r\n'))).toEqual([{ kind: 'line', text: '{"b":2}' }]);
    const big = `{"jsonrpc":"2.0","id":7,"result":"${'x'.repeat(5000)}"}`;
    const out = [...b.push(Buffer.from(big.slice(0, 100))), ...b.push(Buffer.from(`${big.slice(100)}\n{"c":3}\n`))];
    expect(out).toHaveLength(2);
    expect(out[0]).toMatchObject({ kind: 'oversized', bytes: big.length });
    const o = out[0] as { head: string; tail: string };
    expect(idAtEdges(o.head, o.tail)).toBe(7);
    expect(out[1]).toEqual({ kind: 'line', text: '{"c":3}' });
  });

  it("finds the id at either edge, never a nested object's or one quoted in a string", () => {
    expect(idAtEdges('{"jsonrpc":"2.0","id":"r-1","result":', '')).toBe('r-1');
    expect(idAtEdges('{"result":{"content":', 'xx"}]},"jsonrpc":"2.0","id":12}')).toBe(12);
    expect(idAtEdges('{"result":{"content":', '"x":{"id":3}}')).toBeNull();
    expect(idAtEdges('{"result":"', 'text \\"id\\":4}"}')).toBeNull();
  });
});
