import { describe, expect, it } from 'vitest';
import { ANSWERED, compose, errorBoundary, answerMeta, type Guard } from '../../../main/lib/http/compose.ts';
import { httpError, type HttpError } from '../../../main/lib/http/http-error.ts';
import { cloudEnvelope } from '../../../main/lib/http/envelope.ts';
import { requestId } from '../../../main/lib/http/request-id.ts';
import { serve } from './serve.ts';

interface Ctx {
  trail: string[];
  user?: string;
}

const step =
  (name: string, result?: ReturnType<Guard<Ctx>>): Guard<Ctx> =>
  (c) => {
    c.trail.push(name);
    return result;
  };

describe('compose', () => {
  it('runs guards in order over one context and passes when none refuses', async () => {
    const c: Ctx = { trail: [] };
    const auth: Guard<Ctx> = async (ctx) => {
      ctx.user = 'ann';
    };
    expect(await compose<Ctx>(step('host'), auth, step('rate'))(c)).toBeNull();
    expect(c).toEqual({ trail: ['host', 'rate'], user: 'ann' });
  });

  it('stops at the first refusal, returned or thrown, and at ANSWERED', async () => {
    const refused = httpError('forbidden', 'no');
    const c1: Ctx = { trail: [] };
    expect(await compose<Ctx>(step('a'), step('b', refused), step('c'))(c1)).toBe(refused);
    expect(c1.trail).toEqual(['a', 'b']);

    const c2: Ctx = { trail: [] };
    const thrower: Guard<Ctx> = async () => {
      throw httpError('payload_too_large', 'big');
    };
    expect(((await compose<Ctx>(step('a'), thrower, step('c'))(c2)) as HttpError).code).toBe('payload_too_large');
    expect(c2.trail).toEqual(['a']);

    const c3: Ctx = { trail: [] };
    expect(await compose<Ctx>(step('preflight', ANSWERED), step('c'))(c3)).toBe(ANSWERED);
    expect(c3.trail).toEqual(['preflight']);
  });

  it('lets bugs (anything but HttpError) propagate', async () => {
    const bug: Guard<Ctx> = () => {
      throw new TypeError('oops');
    };
    await expect(compose<Ctx>(bug)({ trail: [] })).rejects.toThrow(TypeError);
  });
});

describe('errorBoundary', () => {
  it('answers an escaped HttpError in the envelope, and a bug as a 500 without its message', async () => {
    const logged: string[] = [];
    const handler = errorBoundary(
      (req, res) => {
        requestId(req, res);
        if (req.url === '/refuse') throw httpError('quota_exceeded', 'over', { status: 429 });
        throw new Error('secret internals');
      },
      { envelope: cloudEnvelope, log: { error: (m, f) => logged.push(`${m} ${JSON.stringify(f)}`) }, meta: answerMeta },
    );
    const srv = await serve(handler);
    try {
      const refused = await fetch(`${srv.url}/refuse`, { headers: { 'X-Request-Id': 'abc' } });
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual({
        success: false,
        error: { code: 'quota_exceeded', message: 'over', request_id: 'abc', retryable: false },
      });
      const bug = await fetch(`${srv.url}/bug?token=x`, { headers: { 'X-Request-Id': 'def' } });
      expect(bug.status).toBe(500);
      const body = (await bug.json()) as { error: { code: string; message: string; request_id: string } };
      expect(body.error).toMatchObject({ code: 'internal_error', request_id: 'def' });
      expect(body.error.message).not.toContain('secret');
      expect(logged).toHaveLength(1);
      expect(logged[0]).toContain('secret internals');
      expect(logged[0]).not.toContain('token=x');
    } finally {
      await srv.close();
    }
  });
});
