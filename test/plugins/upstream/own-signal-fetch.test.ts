import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { ownSignalFetch } from '../../../main/plugins/upstream/own-signal-fetch.ts';

// A remote upstream's SDK transport hands every fetch its one long-lived signal: what stays on that signal, against
// a real HTTP server on 127.0.0.1.

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((close) => close()));
});

async function serve(handle: (res: ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handle(res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  open.push(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(() => r()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

describe('ownSignalFetch', () => {
  it('leaves nothing on the transport’s signal once each answer is read', async () => {
    const url = await serve((res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}'));
    const transport = new AbortController();
    const fetched = ownSignalFetch();
    for (let i = 0; i < 50; i++) {
      const res = await fetched(url, { method: 'POST', body: '{}', signal: transport.signal });
      expect(await res.json()).toEqual({ ok: true });
    }
    // fetch itself adds one per request, kept until the request is garbage-collected: 50 here.
    expect(listeners(transport.signal)).toBe(0);
  });

  it('keeps a stream’s request abortable by the transport until its body ends, then lets go', async () => {
    let stream: ServerResponse | undefined;
    const url = await serve((res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('event: message\ndata: {}\n\n');
      stream = res;
    });
    const transport = new AbortController();
    const fetched = ownSignalFetch();

    const ended = await fetched(url, { method: 'POST', body: '{}', signal: transport.signal });
    const reader = ended.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('data: {}');
    expect(listeners(transport.signal)).toBe(1);
    stream!.end();
    expect((await reader.read()).done).toBe(true);
    expect(listeners(transport.signal)).toBe(0);

    const aborted = await fetched(url, { method: 'POST', body: '{}', signal: transport.signal });
    const pending = aborted.body!.getReader();
    await pending.read();
    transport.abort(new Error('the transport closed'));
    await expect(pending.read()).rejects.toThrow();
    expect(listeners(transport.signal)).toBe(0);
  });

  it('lets go of an answer whose reader cancels it, and of a request that fails', async () => {
    const url = await serve((res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('event: message\ndata: {}\n\n');
    });
    const transport = new AbortController();
    const fetched = ownSignalFetch();
    const res = await fetched(url, { method: 'POST', body: '{}', signal: transport.signal });
    await res.body!.cancel();
    expect(listeners(transport.signal)).toBe(0);

    await expect(
      fetched('http://127.0.0.1:1/mcp', { method: 'POST', body: '{}', signal: transport.signal }),
    ).rejects.toThrow();
    expect(listeners(transport.signal)).toBe(0);
  });
});
