import { describe, expect, it } from 'vitest';
import { printable, safe } from '../../main/lib/printable.ts';
import { table } from '../../main/lib/text-table.ts';

// Clear the screen, set the window title, ring the bell, a C1 CSI, a right-to-left override, a lone surrogate.
const HOSTILE = 'Hi\u001b[2J\u001b]0;pwned\u0007\u009b31m\u202egnp.exe\ud800!';
// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])/;

describe('printable', () => {
  it('escapes controls, bidi overrides and lone surrogates, and nothing else', () => {
    expect(printable(HOSTILE)).toBe('Hi\\x1b[2J\\x1b]0;pwned\\x07\\x9b31m\\u202egnp.exe\\ud800!');
    for (const fine of ['Café crème', 'naïve 日本語 ✓', 'emoji 👍🏽 pair', 'tab-free text']) expect(printable(fine)).toBe(fine);
    expect(printable('line\nbreak\r\tand tab')).toBe('line\\x0abreak\\x0d\\x09and tab');
    expect(safe`title ${HOSTILE} by ${'a\u0000b'}`).toBe(`title ${printable(HOSTILE)} by a\\x00b`);
    expect(table([{ a: HOSTILE, b: { nested: '\u001b' } }], ['a', 'b'])).not.toMatch(RAW);
  });
});

