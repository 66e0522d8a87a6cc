import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { createEdgeServer, type ServerLimits } from '../../../main/lib/http/server.ts';

/** A real server on 127.0.0.1:0 for one test file's handler. */
export async function serve(
  handler: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>,
  limits: ServerLimits = {},
) {
  const server = createEdgeServer((req, res) => void handler(req, res), limits);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A raw socket, for requests fetch() will not send (bad Host, stalled bodies). */
export function rawSocket(port: number): Promise<Socket & { text: () => string; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    let text = '';
    s.setEncoding('utf8');
    s.on('data', (d: string) => (text += d));
    const ended = new Promise<void>((r) => s.on('close', () => r()));
    s.once('error', reject);
    s.once('connect', () => resolve(Object.assign(s, { text: () => text, ended })));
  });
}

/** Sends one raw HTTP/1.1 request and resolves with the whole answer once the server closes or answers. */
export async function rawRequest(port: number, head: string, body = ''): Promise<{ status: number; text: string }> {
  const s = await rawSocket(port);
  s.write(`${head}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  await s.ended;
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(s.text())?.[1] ?? 0), text: s.text() };
}
