import { describe, expect, it } from 'vitest';
import { namedTarget } from '../../../main/plugins/upstream/upstream-tools.ts';

/** An upstream write's desk title names what it acts on, not only the tool and the server. */
describe('the target an upstream write names', () => {
  it('is the argument that names it, most telling first', () => {
    expect(namedTarget({ path: '/w/a.txt', content: 'x' })).toBe('/w/a.txt');
    expect(namedTarget({ name: 'notes', uri: 'file:///w/n' })).toBe('file:///w/n');
    expect(namedTarget({ source: '/w/a', destination: '/w/b' })).toBe('/w/a → /w/b');
    expect(namedTarget({ id: 42, title: 'Hello' })).toBe('Hello');
    expect(namedTarget({ id: 42 })).toBe('42');
  });

  it('is none when no argument names it as a short value', () => {
    expect(namedTarget({ line: 'free' })).toBeNull();
    expect(namedTarget({ path: { nested: true } })).toBeNull();
    expect(namedTarget({ path: '   ' })).toBeNull();
    expect(namedTarget({ source: '/w/a' })).toBeNull(); // half a pair, and nothing else
  });

  it('is one line and short', () => {
    expect(namedTarget({ path: 'a\nb\u0007c' })).toBe('a b c');
    const long = namedTarget({ path: 'x'.repeat(500) })!;
    expect(long).toHaveLength(120);
    expect(long.endsWith('…')).toBe(true);
  });
});
