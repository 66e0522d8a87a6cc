import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, Socket, type AddressInfo, type Server } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { exchange } from '../../main/cli/loopback-http.ts';

// The CLI's HTTP client against real servers on 127.0.0.1: node:http's, for the answers the service gives, and a
// bare TCP server for answers no node:http server would send (broken off, malformed, oversized).

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function listen<S extends Server>(server: S): Promise<string> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const httpServer = (handle: (req: IncomingMessage, res: ServerResponse) => void) => listen(createHttpServer(handle));

/** A TCP server that reads the request's head, then hands the socket to `answer`; `closed` settles as each connection closes. */
function tcpServer(answer: (socket: Socket) => void) {
  const closed: Promise<void>[] = [];
  const server = createTcpServer((socket) => {
    closed.push(new Promise((r) => socket.once('close', () => r())));
    let head = '';
    socket.on('data', function onData(d) {
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      answer(socket);
    });
  });
  return { url: listen(server), closed };
}

const text = async (body: AsyncIterable<Uint8Array>) => {
  const parts: Uint8Array[] = [];
  for await (const p of body) parts.push(p);
  return Buffer.concat(parts).toString('utf8');
};

describe('the CLI’s loopback HTTP client', () => {
  it('sends the method, path, query, headers and body, and reads a Content-Length answer', async () => {
    let seen: { method?: string; url?: string; auth?: string; type?: string; body?: string } = {};
    const base = await httpServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen = {
          method: req.method,
          url: req.url,
          auth: req.headers.authorization,
          type: req.headers['content-type'],
          body,
        };
        res.writeHead(201, { 'Content-Type': 'application/json' }).end(JSON.stringify({ ok: true, data: 'é' }));
      });
    });
    const payload = JSON.stringify({ label: 'ünïcode' });
    const res = await exchange(
      `${base}/wp-json/x?limit=2`,
      'POST',
      { Authorization: 'Bearer k', 'Content-Type': 'application/json' },
      payload,
    );
    expect([res.status, res.ok]).toEqual([201, true]);
    expect(await res.json()).toEqual({ ok: true, data: 'é' });
    expect(seen).toEqual({
      method: 'POST',
      url: '/wp-json/x?limit=2',
      auth: 'Bearer k',
      type: 'application/json',
      body: payload,
    });
  });

  it('reads a chunked answer written in parts, and an error status as not ok', async () => {
    const base = await httpServer((_req, res) => {
      res.writeHead(409, { 'Content-Type': 'text/plain' });
      res.write('one,');
      setImmediate(() => {
        res.write('two,');
        setImmediate(() => res.end('three'));
      });
    });
    const res = await exchange(`${base}/`, 'GET', {});
    expect([res.status, res.ok]).toEqual([409, false]);
    expect(await text(res.body)).toBe('one,two,three');
  });

  it('parses chunk sizes and header lines split across any number of reads', async () => {
    const answer =
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\n\r\n';
    const { url } = tcpServer((socket) => {
      socket.setNoDelay(true);
      // One byte per write, each after the last has been handed to the kernel.
      const bytes = Buffer.from(answer, 'latin1');
      const next = (i: number): void => {
        if (i === bytes.length) return void socket.end();
        socket.write(bytes.subarray(i, i + 1), () => next(i + 1));
      };
      next(0);
    });
    const res = await exchange(`${await url}/`, 'GET', {});
    expect(await text(res.body)).toBe('hello world');
  });

  it('reads an answer framed by the end of the connection', async () => {
    const { url } = tcpServer((socket) => socket.end('HTTP/1.1 200 OK\r\n\r\n{"a":1}'));
    expect(await (await exchange(`${await url}/`, 'GET', {})).json()).toEqual({ a: 1 });
  });

  it('fails an answer that ends before its last chunk, or short of its Content-Length, instead of taking it as whole', async () => {
    const chunked = tcpServer((s) => s.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n'));
    const res = await exchange(`${await chunked.url}/`, 'GET', {});
    await expect(text(res.body)).rejects.toThrow('the answer ended before its last chunk');

    const short = tcpServer((s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{"a":'));
    const res2 = await exchange(`${await short.url}/`, 'GET', {});
    await expect(res2.json()).rejects.toThrow('the answer ended 5 bytes short of its Content-Length');
  });

  it('refuses what is not an HTTP/1.1 answer, and a header that never ends, and closes the connection', async () => {
    const notHttp = tcpServer((s) => s.write('SSH-2.0-OpenSSH\r\n\r\n'));
    await expect(exchange(`${await notHttp.url}/`, 'GET', {})).rejects.toThrow(
      'not an HTTP/1.1 answer: "SSH-2.0-OpenSSH"',
    );
    await Promise.all(notHttp.closed);

    const endless = tcpServer((s) => s.write(`HTTP/1.1 200 OK\r\nX-Pad: ${'a'.repeat(70 * 1024)}`));
    await expect(exchange(`${await endless.url}/`, 'GET', {})).rejects.toThrow(
      "the answer's header is over 65536 bytes",
    );
    await Promise.all(endless.closed);

    const badLength = tcpServer((s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n'));
    await expect(exchange(`${await badLength.url}/`, 'GET', {})).rejects.toThrow('a malformed Content-Length: "-1"');
    await Promise.all(badLength.closed);

    const badChunk = tcpServer((s) => s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'));
    await expect(text((await exchange(`${await badChunk.url}/`, 'GET', {})).body)).rejects.toThrow(
      'a malformed chunk size: "zz"',
    );
    await Promise.all(badChunk.closed);
  });

  it('stops reading the socket while what it holds is unread, and the body still arrives whole', async () => {
    const size = 8 * 1024 * 1024;
    const { url } = tcpServer((s) => {
      s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${size}\r\n\r\n`);
      s.end(Buffer.alloc(size, 0x61));
    });
    const port = Number(new URL(await url).port);
    // The client's socket (the one whose far end is the server) pausing: a download nobody reads yet is not pulled
    // into memory. Without the pause this never settles and the test times out.
    let pausedAt = -1;
    const paused = new Promise<void>((resolve) => {
      const pause = Socket.prototype.pause;
      vi.spyOn(Socket.prototype, 'pause').mockImplementation(function (this: Socket) {
        if (this.remotePort === port && pausedAt < 0) {
          pausedAt = this.bytesRead;
          resolve();
        }
        return pause.call(this);
      });
    });
    try {
      const res = await exchange(`${await url}/`, 'GET', {});
      await paused;
      expect(pausedAt).toBeLessThan(size / 4);
      let got = 0;
      for await (const part of res.body) got += part.length;
      expect(got).toBe(size);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('closes the connection once the body is read', async () => {
    const { url, closed } = tcpServer((s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}'));
    expect(await (await exchange(`${await url}/`, 'GET', {})).json()).toEqual({});
    // The server leaves the connection open: only the client's close ends it.
    await Promise.all(closed);
  });

  it('sends no request with a control character in a header, and reports a refused connection', async () => {
    const { url, closed } = tcpServer((s) => s.end('HTTP/1.1 200 OK\r\n\r\n'));
    const base = await url;
    await expect(exchange(`${base}/`, 'GET', { Authorization: 'Bearer k\r\nX-Evil: 1' })).rejects.toThrow(
      'a control character in the request\'s "Authorization" header',
    );
    await expect(exchange(`${base}/`, 'GET', { 'X-A\nB': 'v' })).rejects.toThrow('a control character');
    await expect(exchange(`${base}/`, 'GET', { 'X-A': 'nul\0' })).rejects.toThrow('a control character');
    await expect(exchange(`${base}/`, 'GET', { 'X-A': 'wide \u2028' })).rejects.toThrow('a control character');
    // and a line break in the path is sent percent-encoded, as part of the path
    const echoed = await httpServer((req, res) => res.end(req.url));
    expect(await text((await exchange(`${echoed}/a\r\nX-Evil: 1`, 'GET', {})).body)).toBe('/aX-Evil:%201');

    const gone = createTcpServer();
    const port = new URL(await listen(gone)).port;
    await new Promise((r) => gone.close(r));
    servers.splice(servers.indexOf(gone), 1);
    await expect(exchange(`http://127.0.0.1:${port}/`, 'GET', {})).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await expect(exchange('https://127.0.0.1/', 'GET', {})).rejects.toThrow('not an http:// address');
    // None of the refused requests reached the server.
    expect(closed).toHaveLength(0);
  });
});
