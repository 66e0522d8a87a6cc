import { describe, expect, it } from 'vitest';
import { argsShape } from '../../../main/core/calls/args-shape.ts';

describe('argsShape', () => {
  it('keeps names and types, never values', () => {
    expect(argsShape({ path: '/home/me/.ssh/id_rsa', n: 3, tags: ['a'], on: true, none: null })).toBe(
      '{path:string,n:number,tags:[string],on:boolean,none:null}',
    );
  });

  // A map keyed by tokens (`{"gth_…": {...}}`, `{"ghp_…": "repo"}`) would put the token in the audit and its
  // exports as a key name: such a key is masked like a value.
  it('masks a key that looks like a secret, and keeps ordinary ones', () => {
    const gth = 'gth_TMHVndTODJjOaiKXMUpmNPKKGvZQpP65rS1dno-8fgk';
    const ghp = 'ghp_' + 'Zr8kQ2mW7xL4nB9vC3tY6uP1sD5fG0hJ8kE2';
    const shape = argsShape({ [gth]: { scope: 'all' }, nested: { [ghp]: 'repo' }, path: 'x' });
    expect(shape).not.toContain(gth);
    expect(shape).not.toContain(ghp.slice(4));
    expect(shape).toContain('nested:{');
    expect(shape).toContain('path:string');
    expect(shape).toContain('[redacted]');
  });
});
