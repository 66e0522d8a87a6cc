import { describe, expect, it } from 'vitest';
import { readBody } from '../../../main/lib/http/body.ts';
import { rawSocket, serve } from './serve.ts';
import { getFrom, slowHeaders } from './slow-clients.ts';

describe('createEdgeServer limits', () => {
  it('answers a connection over maxConnections 503 with Retry-After at once, never a reset', async () => {
    const srv = await serve((_req, res) => void res.end('ok'), { maxConnections: 2 });
    try {
      const a = await rawSocket(srv.port);
      const b = await rawSocket(srv.port);
      const c = await rawSocket(srv.port);
      await c.ended; // the third is told, before it sent a byte
      expect(c.text()).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\nRetry-After: 1\r\n/);
      expect(c.text()).toContain('this service holds 2 connections, its most: retry in a second');
      a.write(`GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      await a.ended;
      expect(a.text()).toMatch(/^HTTP\/1\.1 200/);
      b.destroy();
    } finally {
      await srv.close();
    }
  });

  it('a request whose body stalls is cut with 408 after requestTimeout', async () => {
    let reads = 0;
    const srv = await serve(
      async (req, res) => {
        reads++;
        await readBody(req).then(
          () => res.end('complete'),
          () => undefined,
        );
      },
      { requestTimeoutMs: 300, headersTimeoutMs: 300, checkIntervalMs: 50 },
    );
    try {
      const s = await rawSocket(srv.port);
      s.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4000000\r\n\r\n${'a'.repeat(1000)}`);
      await s.ended;
      expect(s.text()).toMatch(/^HTTP\/1\.1 408/);
      expect(reads).toBe(1);
    } finally {
      await srv.close();
    }
  });

  it('headers that never finish are cut too', async () => {
    const srv = await serve((_req, res) => void res.end('ok'), {
      requestTimeoutMs: 300,
      headersTimeoutMs: 200,
      checkIntervalMs: 50,
    });
    try {
      const s = await rawSocket(srv.port);
      s.write(`GET / HTTP/1.1\r\nHost: x\r\n`);
      await s.ended;
      expect(s.text()).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      await srv.close();
    }
  });
});

describe('connections per client address', () => {
  // With the cap, one address keeps 4 of 12 slots and another is served; without it (0), it takes all 12 and the other is told 503.
  it.each([
    { cap: 4, kept: 4, other: 200 },
    { cap: 0, kept: 12, other: 503 },
  ])(
    'maxConnectionsPerAddress $cap: 20 slow-header connections from one address keep $kept slots, another address gets $other',
    async ({ cap, kept, other }) => {
      const srv = await serve((_req, res) => void res.end('ok'), { maxConnections: 12, maxConnectionsPerAddress: cap });
      const slow = await slowHeaders(srv.port, 20, '127.0.0.1');
      try {
        expect(slow.open()).toBe(kept);
        expect(await getFrom(`${srv.url}/`, '127.0.0.2')).toBe(other);
      } finally {
        slow.close();
        await srv.close();
      }
    },
  );

  it('a slot is given back when its connection closes', async () => {
    const srv = await serve((_req, res) => void res.end('ok'), { maxConnections: 12, maxConnectionsPerAddress: 2 });
    const slow = await slowHeaders(srv.port, 2, '127.0.0.1');
    try {
      expect(await getFrom(`${srv.url}/`, '127.0.0.1')).toBe(503);
      slow.close();
      // the server frees the slots when it sees the close, a moment after it
      await expect.poll(() => getFrom(`${srv.url}/`, '127.0.0.1')).toBe(200);
    } finally {
      await srv.close();
    }
  });
});
