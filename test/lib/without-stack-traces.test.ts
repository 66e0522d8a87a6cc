import { describe, expect, it } from 'vitest';
import { withoutStackTraces } from '../../main/lib/without-stack-traces.ts';

describe('withoutStackTraces', () => {
  it('makes errors without stack frames while it runs, and gives the limit back after, also when the function throws', () => {
    const before = Error.stackTraceLimit;
    const made = withoutStackTraces(() => new Error('inside'));
    expect(made.message).toBe('inside');
    // V8 writes the stack as the message alone when it captures no frames.
    expect(made.stack).toBe('Error: inside');
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error('outside').stack).toContain('without-stack-traces.test.ts');

    expect(() =>
      withoutStackTraces(() => {
        throw new TypeError('thrown');
      }),
    ).toThrow('thrown');
    expect(Error.stackTraceLimit).toBe(before);
  });
});
