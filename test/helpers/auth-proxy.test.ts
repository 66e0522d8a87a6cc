/**
 * The test-only auth proxy must be transparent except for the token: the gateway's
 * Host/Origin checks and SSE streaming are only tested honestly through it if it
 * forwards those untouched. Checked against a plain upstream that echoes what it saw.
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthProxy, type AuthProxy } from './auth-proxy.ts';

let upstream: Server;
let proxy: AuthProxy;
let releaseStream: () => void = () => {};

beforeAll(async () => {
  upstream = createServer((req, res) => {
    if (req.url?.startsWith('/mcp/stream')) {
      // One event now, the rest only when the test says so: proves the proxy does not buffer.
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      res.write('event: message\ndata: first\n\n');
      releaseStream = () => res.end('event: message\ndata: last\n\n');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(201, { 'Content-Type': 'application/json', 'X-Upstream': 'yes', 'WWW-Authenticate': 'Bearer' });
      res.end(
        JSON.stringify({
          method: req.method,
          url: req.url,
          headers: req.headers,
          rawHeaders: req.rawHeaders,
          body: Buffer.concat(chunks).toString(),
        }),
      );
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const { port } = upstream.address() as AddressInfo;
  proxy = await startAuthProxy(`http://127.0.0.1:${port}/mcp`, 'gth_secret-token');
});

afterAll(async () => {
  releaseStream();
  await proxy?.close();
  await new Promise<void>((r) => upstream.close(() => r()));
});

/** A raw request, so Host can be set to anything (fetch would not allow it). */
function send(path: string, headers: Record<string, string>, body?: string): Promise<IncomingMessage> {
  const u = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path,
        method: body === undefined ? 'GET' : 'POST',
        headers,
        setHost: !('Host' in headers),
      },
      resolve,
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function json(
  res: IncomingMessage,
): Promise<{ method: string; url: string; headers: Record<string, string>; rawHeaders: string[]; body: string }> {
  let s = '';
  for await (const c of res) s += String(c);
  return JSON.parse(s);
}

describe('test-only auth proxy', () => {
  it('keeps the target path in its URL and listens on loopback', () => {
    expect(proxy.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it('adds the bearer token and forwards method, path, body, Host and Origin unchanged', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const res = await send(
      '/mcp?x=1',
      {
        Host: 'evil.example.com:1234',
        Origin: 'http://evil.example.com',
        'Content-Type': 'application/json',
        'X-Request-Id': 'abc',
      },
      body,
    );
    const seen = await json(res);
    expect(res.statusCode).toBe(201);
    expect(res.headers['x-upstream']).toBe('yes');
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(seen).toMatchObject({ method: 'POST', url: '/mcp?x=1', body });
    expect(seen.headers).toMatchObject({
      host: 'evil.example.com:1234',
      origin: 'http://evil.example.com',
      'x-request-id': 'abc',
      authorization: 'Bearer gth_secret-token',
    });
  });

  it('replaces a client Authorization header instead of sending two', async () => {
    const seen = await json(await send('/mcp', { Authorization: 'Bearer other' }, '{}'));
    expect(seen.rawHeaders.filter((h) => h.toLowerCase() === 'authorization')).toHaveLength(1);
    expect(seen.headers.authorization).toBe('Bearer gth_secret-token');
  });

  it('streams SSE: the first event arrives while the upstream response is still open', async () => {
    const res = await send('/mcp/stream', { Accept: 'text/event-stream' }, '{}');
    expect(res.headers['content-type']).toBe('text/event-stream');
    const it = res[Symbol.asyncIterator]();
    const first = await it.next();
    expect(String(first.value)).toContain('data: first');
    releaseStream();
    let rest = '';
    for (let r = await it.next(); !r.done; r = await it.next()) rest += String(r.value);
    expect(rest).toContain('data: last');
  });

  it('answers 502 with a clear message when the upstream is gone', async () => {
    const dead = await startAuthProxy('http://127.0.0.1:9/mcp', 't');
    try {
      const res = await fetch(dead.url, { method: 'POST', body: '{}' });
      expect(res.status).toBe(502);
      expect(await res.text()).toMatch(/^auth proxy: upstream 127\.0\.0\.1:9 failed/);
    } finally {
      await dead.close();
    }
  });
});
