import { describe, expect, it } from 'vitest';
import { requestId } from '../../../main/lib/http/request-id.ts';
import { serve } from './serve.ts';

describe('requestId', () => {
  it('echoes a safe X-Request-Id, replaces anything else with a UUIDv7, and sets it on the answer', async () => {
    const seen: string[] = [];
    const srv = await serve((req, res) => {
      seen.push(requestId(req, res));
      res.end();
    });
    try {
      const ask = async (id?: string) =>
        (await fetch(srv.url, { headers: id === undefined ? {} : { 'X-Request-Id': id } })).headers.get('x-request-id');
      expect(await ask('req-abc.123:4_5')).toBe('req-abc.123:4_5');
      for (const bad of [undefined, '', 'has space', 'x'.repeat(129), '<script>', 'a/b', '%C3%A9']) {
        const got = await ask(bad);
        expect(got).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      }
      expect(seen[0]).toBe('req-abc.123:4_5');
      expect(new Set(seen).size).toBe(seen.length);
    } finally {
      await srv.close();
    }
  });
});
