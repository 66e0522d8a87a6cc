/**
 * The Origin rule the conformance suite's dns-rebinding-protection scenario checks:
 * an Origin naming this machine (a loopback name, any port) is not DNS rebinding and
 * passes the 403 check, while CORS, and so real browser access, stays governed by `cors`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INIT, rawPost, startTestService } from '../helpers/service.ts';

let svc: Awaited<ReturnType<typeof startTestService>>;
let auth: { Authorization: string };

beforeAll(async () => {
  svc = await startTestService();
  auth = { Authorization: `Bearer ${(await svc.createToken({ label: 'origin' })).token}` };
});
afterAll(async () => svc?.cleanup());

describe('Origin check for requests from this machine', () => {
  it("accepts the gateway's own origin and other loopback origins on any port, without granting CORS", async () => {
    const own = new URL(svc.mcpUrl).origin;
    for (const origin of [
      own,
      'http://localhost:6274',
      'http://127.0.0.1:1',
      'http://[::1]:3000',
      'https://localhost',
    ]) {
      const res = await rawPost(svc.mcpUrl, INIT, { ...auth, Origin: origin });
      expect(res.status, origin).toBe(200);
      expect(res.headers.get('access-control-allow-origin'), origin).toBeNull();
      await res.body?.cancel();
    }
  });

  it('still refuses foreign, look-alike and opaque origins with 403 forbidden', async () => {
    for (const origin of [
      'http://evil.example.com',
      'http://localhost.evil.example',
      'http://127.0.0.1.nip.io:8080',
      'null',
      'file://',
      'chrome-extension://abc',
    ]) {
      const res = await rawPost(svc.mcpUrl, INIT, { ...auth, Origin: origin });
      expect(res.status, origin).toBe(403);
      const body = (await res.json()) as { error: { code: number; data: { code: string } } };
      expect(body.error.data.code, origin).toBe('forbidden');
    }
  });

  it('a loopback origin not in cors still gets no CORS preflight', async () => {
    const res = await fetch(svc.mcpUrl, {
      method: 'OPTIONS',
      headers: { Origin: 'http://localhost:6274', 'Access-Control-Request-Method': 'POST' },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('a loopback origin still needs a token', async () => {
    const res = await rawPost(svc.mcpUrl, INIT, { Origin: 'http://localhost:6274' });
    expect(res.status).toBe(401);
  });
});
