import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SETTINGS_DEFAULTS, type Settings } from '../../main/contract/settings.ts';
import { OptionsData } from '../../main/core/ports/options-data.ts';
import { Tokens } from '../../main/core/identity/tokens.ts';
import { Users } from '../../main/core/identity/users.ts';
import { RateLimiter } from '../../main/lib/rate-limiter.ts';
import { allowedHostnames } from '../../main/lib/http/host.ts';
import { ANSWERED, compose, type Guard } from '../../main/lib/http/compose.ts';
import { jsonRpcEnvelope } from '../../main/lib/http/envelope.ts';
import { sendError, sendJson } from '../../main/lib/http/send.ts';
import {
  authGuard,
  bodyGuard,
  corsGuard,
  enabledGuard,
  hostGuard,
  methodGuard,
  tokenRateGuard,
  type McpRequest,
} from '../../main/mcp/guards.ts';
import { MemoryStore } from '../helpers/memory-store.ts';
import { TestClock } from '../helpers/service.ts';

/**
 * Each guard of the MCP endpoint alone, over real HTTP on 127.0.0.1:0: a
 * request the guard passes gets 200 with what the guard learnt; one it
 * refuses gets the refusal in the endpoint's JSON-RPC envelope.
 */
let server: Server;
let url: string;
let guard: Guard<McpRequest> = () => null;
let settings: Settings = SETTINGS_DEFAULTS;

beforeAll(async () => {
  server = createServer((req, res) => {
    const c: McpRequest = {
      req,
      res,
      requestId: 'rid',
      settings,
      now: 0,
      address: '127.0.0.1',
      stream: false,
      rpcId: null,
    };
    void compose(guard)(c).then(
      (stop) => {
        if (stop === ANSWERED) return;
        if (stop) return sendError(res, stop, jsonRpcEnvelope, { requestId: c.requestId, rpcId: c.rpcId });
        sendJson(res, 200, {
          stream: c.stream,
          user: c.auth?.user?.login ?? null,
          era: c.rpc?.era ?? null,
          rpcId: c.rpcId,
        });
      },
      (e: Error) => sendJson(res, 500, { bug: e.message }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function send(
  g: Guard<McpRequest>,
  init: RequestInit & { headers?: Record<string, string> } = {},
  s: Partial<Settings> = {},
) {
  guard = g;
  settings = { ...SETTINGS_DEFAULTS, enabled: true, ...s };
  const res = await fetch(url, { method: 'POST', ...init });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text ? (JSON.parse(text) as { error?: unknown; [k: string]: unknown }) : null,
  };
}

describe('MCP endpoint guards, one at a time', () => {
  it('hostGuard: a Host we do not serve or a foreign Origin is refused; our own passes', async () => {
    const g = hostGuard(allowedHostnames('127.0.0.1'));
    expect((await send(g)).status).toBe(200);
    expect((await send(hostGuard(new Set(['gatehouse.example'])))).status).toBe(403);
    const foreign = await send(g, { headers: { Origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(foreign.body!.error).toMatchObject({ code: -32003, data: { code: 'forbidden' } });
  });

  it('corsGuard: a preflight from an allowed origin is answered by the guard itself', async () => {
    const r = await send(
      corsGuard,
      { method: 'OPTIONS', headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST' } },
      { cors: ['https://app.example'] },
    );
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect((await send(corsGuard)).status).toBe(200);
  });

  it('methodGuard: PUT is 405 with Allow; a GET for the event stream passes as a stream', async () => {
    const put = await send(methodGuard, { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, POST, OPTIONS');
    const get = await send(methodGuard, { method: 'GET', headers: { Accept: 'text/event-stream' } });
    expect(get.body).toMatchObject({ stream: true });
  });

  it('enabledGuard: the gateway switched off is 503 gateway_disabled', async () => {
    const r = await send(enabledGuard, {}, { enabled: false });
    expect(r.status).toBe(503);
    expect(r.body!.error).toMatchObject({ code: -32010, data: { code: 'gateway_disabled' } });
  });

  it('authGuard: a real token passes as its user; a wrong one is 401, and guessing spends the address budget', async () => {
    const store = new MemoryStore(OptionsData.parse({}), OptionsData);
    const clock = new TestClock();
    const tokens = new Tokens(store, clock);
    const { token } = await tokens.create('guard test', await new Users(store, clock).ensureAdmin());
    const g = authGuard(tokens, new RateLimiter());
    expect((await send(g, { headers: { Authorization: `Bearer ${token}` } })).body).toMatchObject({ user: 'admin' });
    const wrong = await send(g, { headers: { Authorization: 'Bearer gth_nope' } }, { rate_limit: 2 });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await send(g, { headers: { Authorization: 'Bearer gth_nope' } }, { rate_limit: 2 })).status);
    expect(statuses).toContain(429);
  });

  it('tokenRateGuard: a token over its budget is 429 with Retry-After, before any body is read', async () => {
    const g: Guard<McpRequest> = (c) => {
      c.auth = { record: { id: 'tok_1' } } as McpRequest['auth'];
      return tokenRateGuard(limiter)(c);
    };
    const limiter = new RateLimiter();
    expect((await send(g, {}, { rate_limit: 1 })).status).toBe(200);
    const over = await send(g, {}, { rate_limit: 1 });
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('bodyGuard: JSON by Content-Type, within the limit, one message of an era; the id is kept for the refusal', async () => {
    const g = bodyGuard(1024);
    const json = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    const ok = await send(g, { headers: json, body: JSON.stringify({ jsonrpc: '2.0', id: 'a', method: 'ping' }) });
    expect(ok.body).toMatchObject({ era: '2025', rpcId: 'a' });
    expect((await send(g, { headers: { 'Content-Type': 'text/plain' }, body: '{}' })).status).toBe(415);
    expect((await send(g, { headers: json, body: JSON.stringify({ pad: 'x'.repeat(2048) }) })).status).toBe(413);
    const batch = await send(g, { headers: json, body: JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'ping' }]) });
    expect(batch.body!.error).toMatchObject({ code: -32600 });
    const badParams = await send(g, {
      headers: json,
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: { cursor: 5 } }),
    });
    expect(badParams.body).toMatchObject({ id: 7, error: { code: -32602, data: { code: 'invalid_params' } } });
  });
});
