import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../main/lib/rate-limiter.ts';

describe('RateLimiter (GCRA, per key, injected time)', () => {
  it('allows a burst of `limit`, then refuses with a Retry-After', () => {
    const rl = new RateLimiter();
    const t = 1_000_000;
    for (let i = 0; i < 5; i++) expect(rl.check('a', 5, t).allowed).toBe(true);
    const refused = rl.check('a', 5, t);
    expect(refused.allowed).toBe(false);
    expect(refused.retry_after).toBe(12); // one slot frees every 60/5 = 12 s
    expect(refused.remaining).toBe(0);
  });

  it('frees one slot per 60/limit seconds', () => {
    const rl = new RateLimiter();
    const t = 0;
    for (let i = 0; i < 3; i++) rl.check('a', 3, t);
    expect(rl.check('a', 3, t + 19_999).allowed).toBe(false);
    expect(rl.check('a', 3, t + 20_000).allowed).toBe(true);
    expect(rl.check('a', 3, t + 20_000).allowed).toBe(false);
  });

  it('keeps keys apart and reports remaining', () => {
    const rl = new RateLimiter();
    expect(rl.check('a', 10, 0).remaining).toBe(9);
    expect(rl.check('b', 10, 0).remaining).toBe(9);
    expect(rl.check('a', 10, 0).remaining).toBe(8);
  });

  it('0 switches the limit off', () => {
    const rl = new RateLimiter();
    for (let i = 0; i < 1000; i++) expect(rl.check('a', 0, 0).allowed).toBe(true);
  });
});
