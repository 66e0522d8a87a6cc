import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { BodyBudget, readBody } from '../../../main/lib/http/body.ts';
import { isHttpError } from '../../../main/lib/http/http-error.ts';
import { adminEnvelope } from '../../../main/lib/http/envelope.ts';
import { sendError, sendJson } from '../../../main/lib/http/send.ts';
import { rawSocket, serve } from './serve.ts';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** A server that reads each body with `opts` and answers its size, or the refusal. */
async function bodyServer(opts: Parameters<typeof readBody>[1]) {
  const srv = await serve(async (req: IncomingMessage, res: ServerResponse) => {
    try {
      const body = await readBody(req, opts);
      sendJson(res, 200, { size: body.length });
    } catch (e) {
      if (isHttpError(e)) sendError(res, e, adminEnvelope, { requestId: 'r' });
      else res.destroy();
    }
  });
  close = srv.close;
  return srv;
}

describe('readBody', () => {
  it('reads a body whole, in one or many chunks', async () => {
    const srv = await bodyServer({ limit: 1024 });
    const res = await fetch(srv.url, { method: 'POST', body: 'x'.repeat(1000) });
    expect(await res.json()).toEqual({ size: 1000 });
    const empty = await fetch(srv.url, { method: 'POST' });
    expect(await empty.json()).toEqual({ size: 0 });
  });

  it('refuses a declared size over the limit with 413 before reading, and closes the connection', async () => {
    const srv = await bodyServer({ limit: 1024 });
    const s = await rawSocket(srv.port);
    // only the head is sent: the refusal must not wait for a body
    s.write(`POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 999999999\r\n\r\n`);
    await s.ended;
    expect(s.text()).toMatch(/^HTTP\/1\.1 413/);
    expect(s.text()).toMatch(/connection: close/i);
    expect(s.text()).toContain('"code":"payload_too_large"');
  });

  it('refuses a chunked body once it passes the limit', async () => {
    const srv = await bodyServer({ limit: 1024 });
    const s = await rawSocket(srv.port);
    s.write(`POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n`);
    s.write(`400\r\n${'a'.repeat(0x400)}\r\n`);
    s.write(`10\r\n${'b'.repeat(16)}\r\n`);
    await s.ended;
    expect(s.text()).toMatch(/^HTTP\/1\.1 413/);
  });

  it('a shared budget refuses (503, Retry-After) what would exceed it, and frees what each body held', async () => {
    const budget = new BodyBudget(100 * 1024, 16 * 1024);
    const srv = await bodyServer({ limit: 1024 * 1024, budget });
    // two stalled uploads of 60 KiB each: 44 KiB of each is counted, 88 KiB in use
    const stalled = await Promise.all([rawSocket(srv.port), rawSocket(srv.port)]);
    for (const s of stalled)
      s.write(`POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 200000\r\n\r\n${'z'.repeat(60 * 1024)}`);
    await until(() => budget.inUse === 2 * 44 * 1024);
    // a small body never waits on large ones: it fits in its free share
    const small = await fetch(srv.url, { method: 'POST', body: 'x'.repeat(10 * 1024) });
    expect(small.status).toBe(200);
    // a third large body would pass the budget
    const third = await fetch(srv.url, { method: 'POST', body: 'y'.repeat(40 * 1024) });
    expect(third.status).toBe(503);
    expect(third.headers.get('retry-after')).toBe('1');
    expect(((await third.json()) as { code: string }).code).toBe('service_unavailable');
    // the clients go away: the budget is whole again
    for (const s of stalled) s.destroy();
    await until(() => budget.inUse === 0);
    expect((await fetch(srv.url, { method: 'POST', body: 'y'.repeat(40 * 1024) })).status).toBe(200);
  });

  it('an aborted upload rejects and gives its budget back', async () => {
    const budget = new BodyBudget(1024 * 1024, 0);
    let outcome: unknown;
    const srv = await serve(async (req) => {
      outcome = await readBody(req, { budget }).catch((e: Error) => e);
    });
    close = srv.close;
    const s = await rawSocket(srv.port);
    s.write(`POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5000\r\n\r\n${'q'.repeat(1000)}`);
    await until(() => budget.inUse === 1000);
    s.destroy();
    await until(() => outcome !== undefined);
    expect(outcome).toBeInstanceOf(Error);
    expect(budget.inUse).toBe(0);
  });
});

async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 10));
  }
}
