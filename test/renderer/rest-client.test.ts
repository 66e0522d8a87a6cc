import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SETTINGS_DEFAULTS } from '../../main/contract/index.ts';
import type { ApiEvent } from '../../main/contract/index.ts';
import { CSRF_HEADER, createRestApi, defaultBaseUrl, encodeQuery } from '../../renderer/api/rest-client.ts';
import { makeHealth, makeStaged } from './fake-api.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: Server;
let base: string;
let seen: Seen[];
let reply: (res: ServerResponse, req: Seen) => void;

beforeEach(async () => {
  seen = [];
  reply = (res) =>
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ ok: true, data: {} }));
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const s = { method: req.method!, url: req.url!, headers: req.headers, body };
      seen.push(s);
      reply(res, s);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  vi.useRealTimers();
});

const json = (status: number, body: unknown) => (res: ServerResponse) =>
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));

describe('REST client (browser mode) over real HTTP', () => {
  it('sends GET input as a query string, without the CSRF header, and checks the answer against the contract', async () => {
    reply = json(200, { ok: true, data: { entries: [], next_cursor: null } });
    const api = createRestApi(base);
    const r = await api['audit.query']({ tool: 'pages_get', result: 'ok', limit: 10 });
    expect(r).toEqual({ ok: true, data: { entries: [], next_cursor: null } });
    expect(seen[0]!.method).toBe('GET');
    expect(seen[0]!.url).toBe('/wp-json/gatehouse/v1/admin/audit?tool=pages_get&result=ok&limit=10');
    expect(seen[0]!.headers[CSRF_HEADER.toLowerCase()]).toBeUndefined();
    expect(seen[0]!.body).toBe('');
  });

  it('fills path parameters and sends state changes as JSON with the CSRF header', async () => {
    const item = makeStaged(1, { status: 'confirmed' });
    reply = json(200, { ok: true, data: item });
    const api = createRestApi(base);
    const r = await api['staged.confirm']({ id: 'stg/1 x' });
    expect(r.ok && r.data.status).toBe('confirmed');
    expect(seen[0]!.method).toBe('POST');
    expect(seen[0]!.url).toBe('/wp-json/gatehouse/v1/admin/staged/stg%2F1%20x/confirm');
    expect(seen[0]!.headers['x-gatehouse-csrf']).toBe('1');
    expect(seen[0]!.headers['content-type']).toBe('application/json');
    expect(seen[0]!.body).toBe('{}');

    reply = json(200, { ok: true, data: { ...SETTINGS_DEFAULTS, enabled: true } });
    await api['settings.update']({ enabled: true });
    expect(seen[1]!.method).toBe('PATCH');
    expect(JSON.parse(seen[1]!.body)).toEqual({ enabled: true });

    reply = json(200, { ok: true, data: { id: 'tok_1' } });
    await api['tokens.revoke']({ id: 'tok_1' });
    expect(seen[2]!.method).toBe('DELETE');
    expect(seen[2]!.url).toBe('/wp-json/gatehouse/v1/admin/tokens/tok_1');
    expect(seen[2]!.headers['x-gatehouse-csrf']).toBe('1');
  });

  it("passes the service's error codes through", async () => {
    reply = json(403, { ok: false, code: 'forbidden', message: 'missing X-Gatehouse-CSRF header' });
    expect(await createRestApi(base)['tokens.create']({ label: 'x' })).toEqual({
      ok: false,
      code: 'forbidden',
      message: 'missing X-Gatehouse-CSRF header',
    });
  });

  it('maps unreadable answers by status, and a contract mismatch to internal_error', async () => {
    reply = (res) => res.writeHead(502, { 'Content-Type': 'text/html' }).end('<h1>Bad gateway</h1>');
    expect(await createRestApi(base)['health.get']({})).toMatchObject({ ok: false, code: 'service_unavailable' });
    reply = (res) => res.writeHead(401).end();
    expect(await createRestApi(base)['health.get']({})).toMatchObject({ ok: false, code: 'unauthorized' });
    reply = json(200, { ok: true, data: { ...makeHealth(), name: 'something else' } });
    expect(await createRestApi(base)['health.get']({})).toMatchObject({
      ok: false,
      code: 'internal_error',
      message: expect.stringContaining('health.get'),
    });
  });

  it('turns a service that is not there into service_unavailable', async () => {
    await new Promise<void>((r) => server.close(() => r()));
    server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const r = await createRestApi(base)['health.get']({});
    expect(r).toMatchObject({ ok: false, code: 'service_unavailable' });
  });
});

describe('query encoding and base URL', () => {
  it('encodes scalars, repeats array keys and leaves out empty values', () => {
    expect(encodeQuery({ a: ['x', 'y z'], b: undefined, c: 1, d: true, e: null, f: [], g: { k: 1 } })).toBe(
      '?a=x&a=y+z&c=1&d=true&g=%7B%22k%22%3A1%7D',
    );
    expect(encodeQuery({})).toBe('');
  });

  it('finds {base_url} in front of /console/', () => {
    expect(defaultBaseUrl({ origin: 'http://127.0.0.1:7823', pathname: '/console/' })).toBe('http://127.0.0.1:7823');
    expect(defaultBaseUrl({ origin: 'https://h.example', pathname: '/site/console/index.html' })).toBe(
      'https://h.example/site',
    );
    expect(defaultBaseUrl({ origin: 'https://h.example', pathname: '/other' })).toBe('https://h.example');
  });
});

/** Node has no EventSource: this stands in for the browser's, at the boundary. */
class FakeEventSource {
  static all: FakeEventSource[] = [];
  readyState = 0;
  closed = false;
  onopen: (() => void) | null = null;
  onmessage: ((m: { data: string }) => void) | null = null;
  onerror: (() => void) | null = null;
  constructor(readonly url: string) {
    FakeEventSource.all.push(this);
  }
  close() {
    this.closed = true;
    this.readyState = 2;
  }
  open() {
    this.readyState = 1;
    this.onopen?.();
  }
  send(data: string) {
    this.onmessage?.({ data });
  }
  fail(giveUp: boolean) {
    this.readyState = giveUp ? 2 : 0;
    this.onerror?.();
  }
}

describe('live updates over SSE', () => {
  const make = () => {
    FakeEventSource.all = [];
    return createRestApi('http://svc', {
      EventSource: FakeEventSource as unknown as new (url: string) => EventSource,
      reconnectMs: 1000,
      maxReconnectMs: 4000,
    });
  };

  it('shares one stream, delivers valid events and drops anything else', () => {
    const api = make();
    const a: ApiEvent[] = [];
    const b: ApiEvent[] = [];
    const offA = api.subscribe((e) => a.push(e));
    const offB = api.subscribe((e) => b.push(e));
    expect(FakeEventSource.all).toHaveLength(1);
    const source = FakeEventSource.all[0]!;
    expect(source.url).toBe('http://svc/wp-json/gatehouse/v1/admin/events');
    source.open();
    source.send(JSON.stringify({ type: 'staged', item: makeStaged(1) }));
    source.send('not json');
    source.send(JSON.stringify({ type: 'nonsense' }));
    expect(a.map((e) => e.type)).toEqual(['staged']);
    expect(b).toHaveLength(1);
    offA();
    expect(source.closed).toBe(false);
    offB();
    expect(source.closed).toBe(true);
  });

  it('reopens with backoff when the browser gives up, then asks screens to reload', () => {
    vi.useFakeTimers();
    const api = make();
    const events: ApiEvent[] = [];
    const off = api.subscribe((e) => events.push(e));
    FakeEventSource.all[0]!.open();
    // a dropped connection the browser retries by itself: no second source
    FakeEventSource.all[0]!.fail(false);
    expect(FakeEventSource.all).toHaveLength(1);
    FakeEventSource.all[0]!.open();
    expect(events).toEqual([{ type: 'health' }]);
    // the service answered an error: the browser gave up, we retry after 1 s, then 2 s
    FakeEventSource.all[0]!.fail(true);
    vi.advanceTimersByTime(999);
    expect(FakeEventSource.all).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(FakeEventSource.all).toHaveLength(2);
    FakeEventSource.all[1]!.fail(true);
    vi.advanceTimersByTime(1999);
    expect(FakeEventSource.all).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(FakeEventSource.all).toHaveLength(3);
    FakeEventSource.all[2]!.open();
    expect(events).toEqual([{ type: 'health' }, { type: 'health' }]);
    off();
    expect(FakeEventSource.all[2]!.closed).toBe(true);
  });

  it('stops retrying once the last listener leaves', () => {
    vi.useFakeTimers();
    const api = make();
    const off = api.subscribe(() => {});
    FakeEventSource.all[0]!.fail(true);
    off();
    vi.advanceTimersByTime(60_000);
    expect(FakeEventSource.all).toHaveLength(1);
  });
});
