import { describe, expect, it } from 'vitest';
import { parseBody } from '../../../../cloud/http/guards/parse-body.ts';
import { cloudRequest } from './request.ts';

describe('parseBody', () => {
  it('an empty body is {}; JSON is parsed; a __proto__ key stays a plain key', () => {
    const empty = cloudRequest();
    parseBody(empty);
    expect(empty.body).toEqual({});
    const c = cloudRequest();
    c.raw = Buffer.from('{"__proto__":{"x":1},"a":[1]}');
    parseBody(c);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect((c.body as { a: number[] }).a).toEqual([1]);
  });
  it('not JSON is 400 parse_error, too deep is refused', () => {
    const bad = cloudRequest();
    bad.raw = Buffer.from('{nope');
    expect(() => parseBody(bad)).toThrow(expect.objectContaining({ code: 'parse_error', status: 400 }));
    const deep = cloudRequest();
    deep.raw = Buffer.from('['.repeat(500) + ']'.repeat(500));
    expect(() => parseBody(deep)).toThrow(expect.objectContaining({ status: 400 }));
  });
});
