import { request } from 'node:http';
import { connect, type Socket } from 'node:net';

/**
 * `n` connections from `localAddress` that send the start of a request's
 * headers and then nothing (a slowloris); resolves once each is open or was
 * closed by the server. Linux routes all of 127/8 to lo, so a test can be
 * two clients on one machine.
 */
export async function slowHeaders(
  port: number,
  n: number,
  localAddress = '127.0.0.1',
): Promise<{ open: () => number; close: () => void }> {
  const sockets: Socket[] = [];
  await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<void>((resolve) => {
          const s = connect({ port, host: '127.0.0.1', localAddress });
          sockets.push(s);
          s.on('error', () => resolve());
          s.on('close', () => resolve());
          // A refused one is answered (503) and ended by the server: read it, so its end is seen.
          s.on('data', () => {});
          s.on('end', () => s.destroy());
          s.once('connect', () => {
            s.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n');
            // The server either keeps it (slot taken) or closes it at once; give it a moment to decide.
            setTimeout(resolve, 200);
          });
        }),
    ),
  );
  const open = () => sockets.filter((s) => !s.destroyed && !s.closed).length;
  // A busy server closes the refused ones a little later: wait until the count holds still.
  for (let last = -1, deadline = Date.now() + 10_000; open() !== last && Date.now() < deadline;) {
    last = open();
    await new Promise((r) => setTimeout(r, 300));
  }
  return { open, close: () => sockets.forEach((s) => s.destroy()) };
}

/** One GET from `localAddress`; resolves with the status, or 0 when the server dropped the connection. */
export function getFrom(url: string, localAddress: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { localAddress, headers: { Connection: 'close' }, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}
