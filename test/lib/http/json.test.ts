import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_DEPTH, parseJson } from '../../../main/lib/http/json.ts';
import { HttpError } from '../../../main/lib/http/http-error.ts';

function refusal(input: Buffer | string, opts?: Parameters<typeof parseJson>[1]): HttpError {
  try {
    parseJson(input, opts);
  } catch (e) {
    expect(e).toBeInstanceOf(HttpError);
    return e as HttpError;
  }
  throw new Error('expected a refusal');
}

const nested = (depth: number, open = '[', close = ']') => open.repeat(depth) + close.repeat(depth);

describe('parseJson', () => {
  it('parses ordinary JSON from a Buffer or a string', () => {
    expect(parseJson(Buffer.from('{"a":[1,{"b":"c"}],"d":"\\u00e9\\ud83d\\ude00"}'))).toEqual({
      a: [1, { b: 'c' }],
      d: 'é😀',
    });
    expect(parseJson('"x"')).toBe('x');
  });

  it('refuses what is not JSON with 400 parse_error, without echoing the input', () => {
    for (const bad of ['{"jsonrpc":', '', 'nul', '{"a":1}}', '\ufeff{}', '{"gth_secretvalue123":']) {
      const e = refusal(bad);
      expect(e.status).toBe(400);
      expect(e.code).toBe('parse_error');
      expect(e.message).not.toContain('secretvalue');
    }
  });

  it('refuses nesting past the limit, counting arrays and objects alike, and not brackets in strings', () => {
    expect(parseJson(nested(DEFAULT_MAX_DEPTH))).toBeDefined();
    expect(refusal(nested(DEFAULT_MAX_DEPTH + 1)).message).toContain(`deeper than ${DEFAULT_MAX_DEPTH}`);
    expect(refusal('{"a":'.repeat(65) + '1' + '}'.repeat(65)).code).toBe('parse_error');
    expect(parseJson(`{"s":"${'['.repeat(10_000)}\\"${'{'.repeat(10_000)}"}`)).toHaveProperty('s');
    expect(refusal(nested(3), { maxDepth: 2 }).code).toBe('parse_error');
  });

  it('answers a body nested 100,000 levels deep with parse_error, not a stack overflow', () => {
    expect(refusal(nested(100_000)).code).toBe('parse_error');
    expect(refusal('['.repeat(100_000)).code).toBe('parse_error');
  });

  it('refuses lone surrogates, escaped or raw, and accepts pairs', () => {
    for (const bad of [
      '"\\ud800"',
      '"\\udc00"',
      '"\\ud800\\u0041"',
      '"a\\uD83D"',
      '{"k\\ud800":1}',
      '"\\ud800\\ud800"',
    ])
      expect(refusal(bad).message).toMatch(/surrogate/);
    expect(refusal('"\ud800"').message).toMatch(/surrogate/);
    expect(parseJson('"\\uD83D\\uDE00 \\\\ud800"')).toBe('😀 \\ud800');
    // raw bytes that are not UTF-8 decode to U+FFFD: well-formed, accepted
    expect(parseJson(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]))).toBe('\ufffd\ufffd\ufffd');
  });

  it('property: random nesting, huge strings, control characters, surrogates -> a value or a 400, never anything else', () => {
    const seed = Number(process.env.GATEHOUSE_FUZZ_SEED ?? 0x5eed_0009);
    console.log(`parseJson fuzz seed: ${seed} (GATEHOUSE_FUZZ_SEED to replay)`);
    const rnd = mulberry32(seed);
    const int = (n: number) => Math.floor(rnd() * n);
    const pieces = [
      '\\ud800',
      '\\udc00',
      '\\ud83d\\ude00',
      '\u0000',
      '\u001f',
      '\\n',
      '\\"',
      '\\\\',
      '"',
      '[',
      ']',
      '{',
      '}',
      ',',
      ':',
      '\ud800',
      '\udfff',
      'é',
      '𝄞',
      'x'.repeat(1000),
      '\\u12',
      '\\',
    ];
    const str = () => Array.from({ length: int(6) }, () => pieces[int(pieces.length)]).join('');
    const value = (depth: number): string => {
      if (depth <= 0 || rnd() < 0.3)
        return [`"${str()}"`, String(int(1e9)), 'true', 'null', `"${'y'.repeat(int(3) === 0 ? 200_000 : 10)}"`][
          int(5)
        ]!;
      if (rnd() < 0.5) return `[${Array.from({ length: 1 + int(3) }, () => value(depth - 1)).join(',')}]`;
      return `{${Array.from({ length: 1 + int(3) }, () => `"${str()}":${value(depth - 1)}`).join(',')}}`;
    };
    let parsed = 0;
    let refused = 0;
    for (let i = 0; i < 400; i++) {
      let text = int(4) === 0 ? nested(int(5000)) : value(int(8));
      if (int(3) === 0) text = text.slice(0, int(text.length + 1));
      if (int(5) === 0) text = text.replace(/\[/g, () => (int(2) ? '[' : '{'));
      const input = int(2) ? Buffer.from(text, 'utf8') : text;
      try {
        const v = parseJson(input);
        parsed++;
        // what is accepted is safe to keep: well-formed everywhere, and it serialises back
        const out = JSON.stringify(v);
        expect(isWellFormed(out)).toBe(true);
      } catch (e) {
        if (!(e instanceof HttpError)) throw new Error(`seed ${seed}, case ${i}: threw ${String(e)}`, { cause: e });
        expect(e.status).toBe(400);
        expect(e.code).toBe('parse_error');
        refused++;
      }
    }
    expect(parsed).toBeGreaterThan(10);
    expect(refused).toBeGreaterThan(10);
  });

  it('parses a body at the 4 MiB limit', () => {
    const big = JSON.stringify({ pad: 'x'.repeat(4 * 1024 * 1024 - 20) });
    expect((parseJson(Buffer.from(big)) as { pad: string }).pad.length).toBe(4 * 1024 * 1024 - 20);
  });
});

function isWellFormed(s: string): boolean {
  return (s as string & { isWellFormed(): boolean }).isWellFormed();
}

/** A small seeded PRNG, so a failing case can be replayed. */
function mulberry32(a: number): () => number {
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
