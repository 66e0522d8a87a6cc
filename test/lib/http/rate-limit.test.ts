import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../../main/lib/rate-limiter.ts';
import { checkRate, rateHeaders, rateLimitedError } from '../../../main/lib/http/rate-limit.ts';
import { adminEnvelope } from '../../../main/lib/http/envelope.ts';
import { sendError } from '../../../main/lib/http/send.ts';
import { serve } from './serve.ts';

describe('rate-limit guard', () => {
  it('puts RateLimit headers on allowed answers and a 429 with Retry-After on the refused one', async () => {
    const limiter = new RateLimiter();
    const now = 1_000_000;
    const srv = await serve((_req, res) => {
      const refused = checkRate(res, limiter, 'site:1', 2, now);
      if (refused) return sendError(res, refused, adminEnvelope, { requestId: 'r' });
      res.end('ok');
    });
    try {
      const first = await fetch(srv.url);
      expect(first.status).toBe(200);
      expect(first.headers.get('ratelimit-limit')).toBe('2');
      expect(first.headers.get('ratelimit-remaining')).toBe('1');
      expect(first.headers.get('ratelimit-policy')).toBe('2;w=60');
      expect(first.headers.get('retry-after')).toBeNull();
      expect((await fetch(srv.url)).status).toBe(200);
      const third = await fetch(srv.url);
      expect(third.status).toBe(429);
      expect(third.headers.get('retry-after')).toBe('30');
      expect(third.headers.get('ratelimit-remaining')).toBe('0');
      expect(((await third.json()) as { code: string }).code).toBe('rate_limited');
    } finally {
      await srv.close();
    }
  });

  it('a limit of 0 is off: no headers, never refused', () => {
    const d = new RateLimiter().check('k', 0, 0);
    expect(rateHeaders(d)).toEqual({});
    expect(d.allowed).toBe(true);
  });

  it('rateLimitedError carries its headers', () => {
    const rl = new RateLimiter();
    rl.check('k', 1, 0);
    const e = rateLimitedError(rl.check('k', 1, 0));
    expect(e.status).toBe(429);
    expect(e.headers['Retry-After']).toBe('60');
  });
});

describe('RateLimiter key bound (before it, one key per forwarded address, never pruned)', () => {
  it('keeps at most maxKeys keys however many addresses call within a minute', () => {
    const rl = new RateLimiter(1000);
    for (let i = 0; i < 50_000; i++) rl.check(`addr:198.51.${i >> 8}.${i & 255}`, 120, 1_000 + i);
    expect(rl.size).toBe(1000);
  });

  it('forgets the least recently used key first, so an active key keeps its budget', () => {
    const rl = new RateLimiter(3);
    const t = 0;
    expect(rl.check('busy', 1, t).allowed).toBe(true);
    rl.check('a', 1, t);
    rl.check('b', 1, t);
    expect(rl.check('busy', 1, t).allowed).toBe(false); // refused: not re-set, but it is still known
    rl.check('busy', 1, t + 60_000); // used again: moves to the end
    rl.check('c', 1, t + 60_000); // full: 'a' (least recently used) goes
    expect(rl.check('busy', 1, t + 60_000).allowed).toBe(false);
    expect(rl.check('a', 1, t + 60_000).allowed).toBe(true);
  });

  it('keys like __proto__ are ordinary keys', () => {
    const rl = new RateLimiter();
    expect(rl.check('__proto__', 1, 0).allowed).toBe(true);
    expect(rl.check('__proto__', 1, 0).allowed).toBe(false);
    expect(rl.check('constructor', 1, 0).allowed).toBe(true);
  });
});
