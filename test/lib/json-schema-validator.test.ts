import { describe, expect, it } from 'vitest';
import { linearSchemaValidator } from '../../main/lib/json-schema-validator.ts';
import { linearRegExp, PATTERN_BUDGET, toRe2Syntax, UnsupportedPattern } from '../../main/lib/linear-regexp.ts';

/**
 * Schema patterns run on RE2 (main/lib/linear-regexp.ts): the patterns that take JavaScript's engine
 * exponential time finish at once on long inputs, a validation's pattern work is bounded, a pattern
 * RE2 cannot run is refused with its reason, and ordinary patterns validate and refuse as before.
 */
const check = (schema: Record<string, unknown>, value: unknown) => linearSchemaValidator.getValidator(schema)(value);
const string = (pattern: string) => ({ type: 'object', properties: { s: { type: 'string', pattern } } });

describe('schema patterns in linear time', () => {
  it('the evil patterns finish on long inputs, refused or passed as they should be', () => {
    // JavaScript's own engine takes seconds on 29 characters of these (2^n steps); 50 000 take RE2 a few ms
    const long = `${'a'.repeat(50_000)}!`;
    const started = performance.now();
    expect(check(string('^(a+)+$'), { s: long })).toMatchObject({ valid: false });
    expect(check(string('^(a|a)+$'), { s: long })).toMatchObject({ valid: false });
    expect(check(string('^(a+)+$'), { s: 'a'.repeat(50_000) })).toMatchObject({ valid: true });
    expect(
      check({ type: 'object', patternProperties: { '^(a|a)+$': { type: 'number' } } }, { [long]: 'x' }),
    ).toMatchObject({
      valid: true,
    });
    expect(
      check({ type: 'object', patternProperties: { '^(a|a)+$': { type: 'number' } } }, { aaaa: 'x' }),
    ).toMatchObject({
      valid: false,
    });
    // a bound no run comes near (tens of milliseconds), far below what the backtracking engine would take
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it("a validation's pattern work is bounded: a value too long for it is refused, saying why", () => {
    const huge = 'a'.repeat(Math.ceil(PATTERN_BUDGET / 10));
    const r = check(string('^(a|a)+$'), { s: huge });
    expect(r.valid).toBe(false);
    expect(r.errorMessage).toMatch(/too long to check against the schema's patterns within Gatehouse's bound/);
    // the budget is per validation: the next one starts afresh
    expect(check(string('^(a|a)+$'), { s: 'aaa' }).valid).toBe(true);
  });

  it('a pattern RE2 cannot run is refused when the schema is compiled, with the reason', () => {
    expect(() => check(string('^(?=.*\\d).{8,}$'), { s: 'x' })).toThrow(UnsupportedPattern);
    expect(() => check(string('^(?=.*\\d).{8,}$'), { s: 'x' })).toThrow(/cannot be checked in linear time.*lookaround/);
    expect(() => check(string('^(a)\\1$'), { s: 'aa' })).toThrow(/invalid escape sequence: `\\1`/);
  });

  it('a pattern RE2 cannot run is refused before any code is generated, wherever it sits in the schema', () => {
    const lookaround = '^(?=x)';
    const places: Array<Record<string, unknown>> = [
      { type: 'object', properties: { a: { type: 'array', items: { type: 'string', pattern: lookaround } } } },
      { type: 'object', properties: { a: { anyOf: [{ type: 'number' }, { type: 'string', pattern: lookaround }] } } },
      { type: 'object', patternProperties: { [lookaround]: { type: 'string' } } },
      { type: 'object', $defs: { d: { type: 'string', pattern: lookaround } } },
      { type: 'object', additionalProperties: { not: { type: 'string', pattern: lookaround } } },
    ];
    for (const schema of places) expect(() => linearSchemaValidator.getValidator(schema)).toThrow(UnsupportedPattern);
    // a property named like a keyword is a name, not a pattern
    expect(check({ type: 'object', properties: { pattern: { type: 'string' } } }, { pattern: '(?=' }).valid).toBe(true);
  });

  it('a schema is compiled at its first validation: one only the compile finds unusable says so then, and nothing earlier', () => {
    const dangling = { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } };
    const validate = linearSchemaValidator.getValidator(dangling);
    const r = validate({ a: 1 });
    expect(r.valid).toBe(false);
    expect(r.errorMessage).toMatch(/^the schema cannot be used to check a value: .*missing/);
    // equal schemas share one compiled validator, and each still checks its own values
    const a = linearSchemaValidator.getValidator(string('^x+$'));
    const b = linearSchemaValidator.getValidator(string('^x+$'));
    expect([a({ s: 'xx' }).valid, b({ s: 'y' }).valid]).toEqual([true, false]);
  });

  it('ordinary patterns validate and refuse as before, ECMAScript escapes included', () => {
    expect(check(string('^[a-z0-9_-]{3,16}$'), { s: 'gate_house-1' }).valid).toBe(true);
    const refused = check(string('^[a-z0-9_-]{3,16}$'), { s: 'Gate House' });
    expect(refused.valid).toBe(false);
    expect(refused.errorMessage).toMatch(/must match pattern/);
    // searched anywhere, as JSON Schema's pattern is (not anchored)
    expect(check(string('\\d+'), { s: 'abc 42' }).valid).toBe(true);
    expect(check(string('^\\u00e9t\\u00e9$'), { s: 'été' }).valid).toBe(true);
    expect(check(string('^\\ud83d\\ude00$'), { s: '😀' }).valid).toBe(true);
    expect(check(string('^\\p{L}+$'), { s: 'Trondheim' }).valid).toBe(true);
    expect(check(string('^(?<year>\\d{4})-\\d{2}$'), { s: '2026-12' }).valid).toBe(true);
    expect(check(string('^https?:\\/\\/[^\\s]+$'), { s: 'https://example.com/a' }).valid).toBe(true);
    // the rest of the schema as the SDK's validator checks it: formats, dialects by $schema
    expect(check({ type: 'object', properties: { e: { type: 'string', format: 'email' } } }, { e: 'nope' }).valid).toBe(
      false,
    );
    const draft7 = { $schema: 'http://json-schema.org/draft-07/schema#', ...string('^x+$') };
    expect(check(draft7, { s: 'xx' }).valid).toBe(true);
    expect(check(draft7, { s: 'y' }).valid).toBe(false);
    expect(() => check({ $schema: 'https://example.com/mine', type: 'object' }, {})).toThrow(/unsupported dialect/);
  });

  it('translates only real escapes: an escaped backslash before u stays itself', () => {
    expect(toRe2Syntax('\\u0041')).toBe('\\x{41}');
    expect(toRe2Syntax('\\\\u0041')).toBe('\\\\u0041');
    expect(toRe2Syntax('\\u{1F600}')).toBe('\\x{1F600}');
    expect(linearRegExp('^\\\\u0041$').test('\\u0041')).toBe(true);
  });
});
