import { describe, expect, it } from 'vitest';
import { backoffDelay, parseRetryAfter, retry, type RetryOptions } from '../../main/lib/retry.ts';

class Transient extends Error {
  constructor(readonly retryAfter?: number) {
    super('transient');
  }
}

/** A virtual clock: sleeps advance it instead of waiting. */
function harness(extra: Partial<RetryOptions> = {}) {
  let t = 0;
  const waits: number[] = [];
  const opts: RetryOptions = {
    attempts: 3,
    baseMs: 500,
    capMs: 5000,
    retryable: (e) => e instanceof Transient,
    retryAfterMs: (e) => (e instanceof Transient ? e.retryAfter : undefined),
    random: () => 1,
    now: () => t,
    sleep: async (ms) => {
      waits.push(ms);
      t += ms;
    },
    ...extra,
  };
  return { opts, waits };
}

describe('backoffDelay', () => {
  it('is min(base * 2^(n-1), cap), less up to `jitter` of it', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, 500, 5000, 0))).toEqual([500, 1000, 2000, 4000, 5000, 5000]);
    expect(backoffDelay(3, 500, 5000, 0.5, () => 1)).toBe(1000);
    expect(backoffDelay(3, 500, 5000, 0.5, () => 0)).toBe(2000);
    for (let i = 0; i < 100; i++) {
      const d = backoffDelay(10, 500, 5000);
      expect(d).toBeGreaterThanOrEqual(2500);
      expect(d).toBeLessThanOrEqual(5000);
    }
  });
});

describe('retry', () => {
  it('retries a retryable failure with growing delays, then succeeds; fn sees the attempt number', async () => {
    const { opts, waits } = harness({ random: () => 0 });
    const seen: number[] = [];
    const out = await retry(async (attempt) => {
      seen.push(attempt);
      if (attempt < 3) throw new Transient();
      return 'done';
    }, opts);
    expect(out).toBe('done');
    expect(seen).toEqual([1, 2, 3]);
    expect(waits).toEqual([500, 1000]);
  });

  it('gives up after `attempts` with the last error, and never retries what is not retryable', async () => {
    const { opts } = harness();
    let calls = 0;
    await expect(retry(async () => (calls++, Promise.reject(new Transient())), opts)).rejects.toBeInstanceOf(Transient);
    expect(calls).toBe(3);
    calls = 0;
    await expect(retry(async () => (calls++, Promise.reject(new Error('quota_exceeded'))), opts)).rejects.toThrow(
      'quota_exceeded',
    );
    expect(calls).toBe(1);
  });

  it('waits what Retry-After asks when within the cap; a longer one ends the retries', async () => {
    const { opts, waits } = harness({ maxRetryAfterMs: 30_000 });
    let calls = 0;
    await retry(async () => {
      if (++calls === 1) throw new Transient(12_000);
      return 1;
    }, opts);
    expect(waits).toEqual([12_000]);
    calls = 0;
    await expect(retry(async () => (calls++, Promise.reject(new Transient(31_000))), opts)).rejects.toBeInstanceOf(
      Transient,
    );
    expect(calls).toBe(1);
  });

  it('stops at maxElapsedMs, shortening the last wait to fit (unbounded attempts need it)', async () => {
    const { opts, waits } = harness({
      attempts: Infinity,
      maxElapsedMs: 2000,
      baseMs: 400,
      capMs: 400,
      random: () => 0,
    });
    let calls = 0;
    await expect(retry(async () => (calls++, Promise.reject(new Transient())), opts)).rejects.toBeInstanceOf(Transient);
    expect(waits).toEqual([400, 400, 400, 400, 400]);
    expect(calls).toBe(6);
    await expect(retry(async () => 1, { ...opts, maxElapsedMs: undefined })).rejects.toThrow(RangeError);
    await expect(retry(async () => 1, { ...opts, attempts: 0 })).rejects.toThrow(RangeError);
  });

  it('an abort stops it at once, during a wait included, with the abort reason', async () => {
    const ctrl = new AbortController();
    let calls = 0;
    const p = retry(
      async () => {
        calls++;
        throw new Transient();
      },
      { attempts: 5, baseMs: 60_000, capMs: 60_000, retryable: () => true, signal: ctrl.signal },
    );
    setTimeout(() => ctrl.abort(new Error('user cancelled')), 20);
    await expect(p).rejects.toThrow('user cancelled');
    expect(calls).toBe(1);
    const done = new AbortController();
    done.abort();
    await expect(
      retry(async () => 1, { attempts: 1, baseMs: 1, capMs: 1, retryable: () => true, signal: done.signal }),
    ).rejects.toThrow();
  });

  it('tells onRetry about each wait', async () => {
    const { opts } = harness({ random: () => 0 });
    const told: Array<{ attempt: number; delayMs: number }> = [];
    await retry(async (n) => (n < 3 ? Promise.reject(new Transient()) : 'ok'), {
      ...opts,
      onRetry: ({ attempt, delayMs }) => told.push({ attempt, delayMs }),
    });
    expect(told).toEqual([
      { attempt: 1, delayMs: 500 },
      { attempt: 2, delayMs: 1000 },
    ]);
  });
});

describe('parseRetryAfter', () => {
  it('reads delta seconds and HTTP dates; ignores what is neither', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    for (const bad of [undefined, null, '', '  ', '-5', 'soon', '1e3x'])
      expect(parseRetryAfter(bad, now)).toBeUndefined();
  });
});

describe('the cloud client policy of docs/cloud-client.md, over real HTTP', () => {
  it('3 attempts, one X-Request-Id across them with X-Attempt, Retry-After honoured, quota_exceeded never retried', async () => {
    const { serve } = await import('./http/serve.ts');
    const seen: Array<{ id: string | undefined; attempt: string | undefined; path: string | undefined }> = [];
    const srv = await serve((req, res) => {
      seen.push({
        id: req.headers['x-request-id'] as string,
        attempt: req.headers['x-attempt'] as string,
        path: req.url,
      });
      const n = seen.filter((s) => s.path === req.url).length;
      if (req.url === '/flaky' && n === 1)
        return void res
          .writeHead(503, { 'Retry-After': '1' })
          .end('{"success":false,"error":{"code":"gateway_unavailable","retryable":true}}');
      if (req.url === '/flaky' && n === 2)
        return void res.writeHead(429, {}).end('{"success":false,"error":{"code":"rate_limited","retryable":true}}');
      if (req.url === '/quota')
        return void res
          .writeHead(429, { 'Retry-After': '5' })
          .end('{"success":false,"error":{"code":"quota_exceeded","retryable":false}}');
      res.end('{"success":true}');
    });
    class Refused extends Error {
      constructor(
        readonly status: number,
        readonly retryable: boolean,
        readonly retryAfter: number | undefined,
      ) {
        super(`HTTP ${status}`);
      }
    }
    const waits: number[] = [];
    const call = (path: string) =>
      retry(
        async (attempt) => {
          const res = await fetch(`${srv.url}${path}`, {
            headers: { 'X-Request-Id': `req-${path.slice(1)}`, 'X-Attempt': String(attempt) },
          });
          const body = (await res.json()) as { success: boolean; error?: { retryable: boolean } };
          if (!body.success)
            throw new Refused(res.status, body.error!.retryable, parseRetryAfter(res.headers.get('retry-after')));
          return body;
        },
        {
          attempts: 3,
          baseMs: 500,
          capMs: 5000,
          maxRetryAfterMs: 30_000,
          retryable: (e) => !(e instanceof Refused) || e.retryable,
          retryAfterMs: (e) => (e instanceof Refused ? e.retryAfter : undefined),
          sleep: async (ms) => void waits.push(ms),
        },
      );
    try {
      expect(await call('/flaky')).toEqual({ success: true });
      expect(seen.filter((s) => s.path === '/flaky')).toEqual(
        [1, 2, 3].map((n) => ({ id: 'req-flaky', attempt: String(n), path: '/flaky' })),
      );
      expect(waits[0]).toBe(1000); // Retry-After: 1
      expect(waits[1]).toBeGreaterThanOrEqual(500);
      expect(waits[1]).toBeLessThanOrEqual(1000); // min(0.5 s * 2^1, 5 s), less jitter
      await expect(call('/quota')).rejects.toMatchObject({ status: 429 });
      expect(seen.filter((s) => s.path === '/quota')).toHaveLength(1);
    } finally {
      await srv.close();
    }
  });
});
