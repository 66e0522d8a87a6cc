import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { allowedHostnames, checkHost } from '../../../main/lib/http/host.ts';
import { answerPreflight, checkOrigin, corsHeaders, type CorsPolicy } from '../../../main/lib/http/cors.ts';
import { adminEnvelope } from '../../../main/lib/http/envelope.ts';
import { sendError } from '../../../main/lib/http/send.ts';
import { rawRequest, serve } from './serve.ts';

const req = (headers: Record<string, string>) =>
  ({
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
  }) as unknown as IncomingMessage;

describe('Host check (DNS rebinding)', () => {
  const allowed = allowedHostnames('127.0.0.1', ['gatehouse.lan']);

  it('accepts loopback names, the bind address and extra hosts, with any port, in any case', () => {
    expect([...allowedHostnames('0.0.0.0')]).toEqual(['localhost', '127.0.0.1', '[::1]']);
    expect(allowedHostnames('::1').has('[::1]')).toBe(true);
    for (const host of ['127.0.0.1:7823', 'localhost', 'LOCALHOST:1', '[::1]:80', 'gatehouse.lan:7823'])
      expect(checkHost(req({ host }), allowed)).toBeNull();
  });

  it('another name is 403 forbidden', () => {
    const e = checkHost(req({ host: 'evil.example:7823' }), allowed);
    expect(e?.status).toBe(403);
    expect(e?.code).toBe('forbidden');
  });

  it('user info, garbage or no Host is 400 invalid_request, and the message is printable', () => {
    for (const host of [
      'user@127.0.0.1',
      'user:pw@localhost:7823',
      '127.0.0.1/x',
      'local host',
      '127.0.0.1:',
      '127.0.0.1:99999x',
      '[::1',
      '\u0007bell',
      '',
      '..',
      'a'.repeat(300),
    ]) {
      const e = checkHost(req({ host }), allowed);
      expect(e?.status, host).toBe(400);
      expect(e?.code).toBe('invalid_request');
      expect([...(e?.message ?? '')].some((ch) => ch.charCodeAt(0) < 0x20)).toBe(false);
    }
    expect(checkHost(req({}), allowed)?.status).toBe(400);
  });

  it('over real HTTP, a Host with user info answers 400 (not 500)', async () => {
    const srv = await serve((r, res) => {
      const e = checkHost(r, allowed);
      if (e) return sendError(res, e, adminEnvelope, { requestId: 'r' });
      res.end('ok');
    });
    try {
      expect((await rawRequest(srv.port, `GET / HTTP/1.1\r\nHost: user@127.0.0.1:${srv.port}`)).status).toBe(400);
      expect((await rawRequest(srv.port, `GET / HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}`)).status).toBe(200);
    } finally {
      await srv.close();
    }
  });
});

describe('Origin and CORS', () => {
  const sameHost = allowedHostnames('127.0.0.1');
  const policy: CorsPolicy = {
    origins: ['https://app.example'],
    methods: 'POST, OPTIONS',
    allowHeaders: 'Authorization, Content-Type',
    exposeHeaders: 'X-Request-Id',
  };

  it('no Origin passes; an allowed origin passes; a local page passes (SDK localhost rule); others are 403', () => {
    expect(checkOrigin(req({}), policy.origins, sameHost)).toBeNull();
    expect(checkOrigin(req({ origin: 'https://app.example/' }), policy.origins, sameHost)).toBeNull();
    expect(checkOrigin(req({ origin: 'http://localhost:5173' }), policy.origins, sameHost)).toBeNull();
    expect(checkOrigin(req({ origin: 'http://127.0.0.1:9' }), policy.origins, sameHost)).toBeNull();
    for (const origin of [
      'https://evil.example',
      'null',
      'garbage',
      'http://localhost.evil.example',
      'http://user@evil.example',
    ]) {
      expect(checkOrigin(req({ origin }), policy.origins, sameHost)?.status, origin).toBe(403);
    }
    expect(checkOrigin(req({ origin: 'https://anything.example' }), ['*'])).toBeNull();
  });

  it('CORS headers only for an origin in the list (a local page still gets none)', () => {
    expect(corsHeaders(req({ origin: 'https://app.example' }), policy)).toEqual({
      'Access-Control-Allow-Origin': 'https://app.example',
      'Access-Control-Expose-Headers': 'X-Request-Id',
      Vary: 'Origin',
    });
    expect(corsHeaders(req({ origin: 'http://localhost:5173' }), policy)).toEqual({});
    expect(corsHeaders(req({}), policy)).toEqual({});
  });

  it('preflight: 204 with the policy for an allowed origin, 403 for another', async () => {
    const srv = await serve((r, res) => {
      const e = answerPreflight(r, res, policy);
      if (e) sendError(res, e, adminEnvelope, { requestId: 'r' });
    });
    try {
      const ok = await fetch(srv.url, {
        method: 'OPTIONS',
        headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST' },
      });
      expect(ok.status).toBe(204);
      expect(ok.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
      expect(ok.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type');
      expect(ok.headers.get('access-control-max-age')).toBe('600');
      const no = await fetch(srv.url, { method: 'OPTIONS', headers: { Origin: 'https://evil.example' } });
      expect(no.status).toBe(403);
      const bare = await fetch(srv.url, { method: 'OPTIONS' });
      expect(bare.status).toBe(204);
      expect(bare.headers.get('allow')).toBe('POST, OPTIONS');
      expect(bare.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await srv.close();
    }
  });
});
