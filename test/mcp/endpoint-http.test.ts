import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INIT, rawPost, startTestService } from '../helpers/service.ts';
import { HTTP_REFUSAL } from '../../main/contract/audit.ts';

let svc: Awaited<ReturnType<typeof startTestService>>;
let token: string;

beforeAll(async () => {
  svc = await startTestService();
  token = (await svc.createToken({ label: 'raw http' })).token;
});
afterAll(async () => svc?.cleanup());

const auth = () => ({ Authorization: `Bearer ${token}` });

async function errorBody(res: Response) {
  const body = (await res.json()) as {
    jsonrpc: string;
    error: { code: number; message: string; data: { code: string; request_id: string } };
  };
  expect(body.jsonrpc).toBe('2.0');
  expect(body.error.data.request_id).toBe(res.headers.get('x-request-id'));
  return body.error;
}

describe('HTTP statuses and headers of the MCP endpoint', () => {
  it('a GET that does not ask for the event stream answers 405; Allow names GET for the stream', async () => {
    const res = await fetch(svc.mcpUrl, { headers: auth() });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, POST, OPTIONS');
    expect((await errorBody(res)).data.code).toBe('invalid_request');
  });

  it('no, malformed and unknown tokens get 401 with WWW-Authenticate: Bearer', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { Authorization: 'Basic abc' },
      { Authorization: `Bearer gth_${'A'.repeat(43)}` },
      { Authorization: 'Bearer nonsense' },
    ]) {
      const res = await rawPost(svc.mcpUrl, INIT, headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      const err = await errorBody(res);
      expect(err.code).toBe(-32001);
      expect(err.data.code).toBe('unauthorized');
    }
  });

  it('a revoked token gets 401 on its next request', async () => {
    const extra = await svc.createToken({ label: 'to revoke' });
    expect((await rawPost(svc.mcpUrl, INIT, { Authorization: `Bearer ${extra.token}` })).status).toBe(200);
    await svc.revokeToken(extra.record.id);
    const res = await rawPost(svc.mcpUrl, INIT, { Authorization: `Bearer ${extra.token}` });
    expect(res.status).toBe(401);
    expect((await errorBody(res)).message).toContain('revoked');
  });

  it('echoes X-Request-Id, or generates one', async () => {
    const echoed = await rawPost(svc.mcpUrl, INIT, { ...auth(), 'X-Request-Id': 'req-abc.123' });
    expect(echoed.headers.get('x-request-id')).toBe('req-abc.123');
    const generated = await rawPost(svc.mcpUrl, INIT, auth());
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('not JSON gets 400 parse_error', async () => {
    const res = await rawPost(svc.mcpUrl, '{"jsonrpc":', auth());
    expect(res.status).toBe(400);
    const err = await errorBody(res);
    expect(err.code).toBe(-32700);
    expect(err.data.code).toBe('parse_error');
  });

  it('a 5 MiB body gets 413 payload_too_large', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(5 * 1024 * 1024) } });
    const res = await rawPost(svc.mcpUrl, big, auth());
    expect(res.status).toBe(413);
    expect((await errorBody(res)).data.code).toBe('payload_too_large');
  });

  it('a hostile Host or Origin gets 403 forbidden', async () => {
    const port = new URL(svc.mcpUrl).port;
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: new URL(svc.mcpUrl).pathname,
          method: 'POST',
          headers: { Host: `evil.example:${port}`, 'Content-Type': 'application/json', ...auth() },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(INIT));
    });
    expect(status).toBe(403);
    const res = await rawPost(svc.mcpUrl, INIT, { ...auth(), Origin: 'https://evil.example' });
    expect(res.status).toBe(403);
    const err = await errorBody(res);
    expect(err.code).toBe(-32003);
    expect(err.data.code).toBe('forbidden');
  });

  it('CORS preflight and responses follow the cors setting, live', async () => {
    const origin = 'https://app.example';
    const before = await fetch(svc.mcpUrl, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': 'POST' },
    });
    expect(before.status).toBe(403);
    await svc.dispatch('settings.update', { cors: [origin] });
    const pre = await fetch(svc.mcpUrl, {
      method: 'OPTIONS',
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization, content-type',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe(origin);
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    const res = await rawPost(svc.mcpUrl, INIT, { ...auth(), Origin: origin });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(origin);
    await svc.dispatch('settings.update', { cors: [] });
  });

  it('enabled=false answers 503 gateway_disabled, and switching back works without a restart', async () => {
    await svc.dispatch('settings.update', { enabled: false });
    const res = await rawPost(svc.mcpUrl, INIT, auth());
    expect(res.status).toBe(503);
    const err = await errorBody(res);
    expect(err.code).toBe(-32010);
    expect(err.data.code).toBe('gateway_disabled');
    await svc.dispatch('settings.update', { enabled: true });
    expect((await rawPost(svc.mcpUrl, INIT, auth())).status).toBe(200);
  });

  it('rate limit: 429 with Retry-After and RateLimit headers, per token, live setting', async () => {
    const limited = await svc.createToken({ label: 'limited' });
    const other = await svc.createToken({ label: 'other' });
    await svc.dispatch('settings.update', { rate_limit: 3 });
    try {
      const h = { Authorization: `Bearer ${limited.token}` };
      const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'site_identity', arguments: {} } };
      for (let i = 0; i < 3; i++) {
        const ok = await rawPost(svc.mcpUrl, call, h);
        expect(ok.status).toBe(200);
        expect(ok.headers.get('ratelimit-limit')).toBe('3');
      }
      const res = await rawPost(svc.mcpUrl, call, h);
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(res.headers.get('ratelimit-remaining')).toBe('0');
      const err = await errorBody(res);
      expect(err.code).toBe(-32029);
      expect(err.data.code).toBe('rate_limited');
      // The refusal says which setting raises the limit, and how.
      expect(err.message).toMatch(
        /^rate limit of 3 requests per minute reached; retry after \d+ s \(the rate_limit setting raises it: gatehouse settings set rate_limit N, 0 turns it off\)$/,
      );
      // another token has its own budget
      expect((await rawPost(svc.mcpUrl, call, { Authorization: `Bearer ${other.token}` })).status).toBe(200);
      // the refused call is audited: with its token, but as an HTTP refusal, since the body is
      // not read (so the tool is not known) once the token's budget is spent
      await svc.core.audit.flush();
      const page = await svc.core.audit.query({ token_id: limited.record.id, result: 'rate_limited', limit: 10 });
      expect(page.entries).toHaveLength(1);
      expect(page.entries[0]).toMatchObject({
        tool: HTTP_REFUSAL,
        error_code: 'rate_limited',
        token_preview: limited.record.preview,
        client: expect.stringMatching(/^address /),
      });
    } finally {
      await svc.dispatch('settings.update', { rate_limit: 120 });
    }
  });

  it('failed authentication spends the address budget (proxy-named when trusted), so token guessing is limited', async () => {
    await svc.dispatch('settings.update', { rate_limit: 2, trust_proxy_headers: true });
    try {
      const bad = { Authorization: `Bearer gth_${'B'.repeat(43)}`, 'X-Forwarded-For': '203.0.113.7, 10.0.0.1' };
      expect((await rawPost(svc.mcpUrl, INIT, bad)).status).toBe(401);
      expect((await rawPost(svc.mcpUrl, INIT, bad)).status).toBe(401);
      const res = await rawPost(svc.mcpUrl, INIT, bad);
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).not.toBeNull();
      // a valid token from the same address is not held back by those failures
      expect((await rawPost(svc.mcpUrl, INIT, { ...auth(), 'X-Forwarded-For': '203.0.113.7' })).status).toBe(200);
      // another (proxy-named) address is not affected
      expect((await rawPost(svc.mcpUrl, INIT, { ...bad, 'X-Forwarded-For': '203.0.113.8' })).status).toBe(401);
    } finally {
      await svc.dispatch('settings.update', { rate_limit: 120, trust_proxy_headers: false });
    }
  });
});
