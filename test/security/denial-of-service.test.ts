/**
 * Nobody with a token can take the service down, MCP side: each
 * example walked against a real service over real HTTP, then a fuzz test per
 * class (keys, malformed bodies) with its seed printed, so a failure can be
 * replayed with GATEHOUSE_FUZZ_SEED.
 */
import { request } from 'node:http';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTP_REFUSAL, RESOURCE_READ, UNKNOWN_TOOL } from '../../main/contract/audit.ts';
import { REFUSALS_AUDITED_PER_MINUTE } from '../../main/mcp/refusal-audit.ts';
import { INIT, TestClock, connectClient, rawPost, startTestService } from '../helpers/service.ts';

let svc: Awaited<ReturnType<typeof startTestService>>;
let subscriber: string;
let admin: string;

beforeAll(async () => {
  svc = await startTestService();
  await svc.dispatch('users.add', { login: 'sub', role: 'subscriber' });
  subscriber = (await svc.createToken({ label: 'subscriber', user: 'sub' })).token;
  admin = (await svc.createToken({ label: 'admin' })).token;
  await svc.dispatch('settings.update', { rate_limit: 100_000 });
});
afterAll(async () => svc?.cleanup());

const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });
const call = (name: string, id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: {} },
});
/** A 2026-07-28 request: the per-request envelope in `_meta`. */
const modern = (method: string, version = '2026-07-28') => ({
  jsonrpc: '2.0',
  id: 9,
  method,
  params: {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': version,
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});
type RpcError = {
  jsonrpc: string;
  id: unknown;
  error: { code: number; message: string; data: { code: string; request_id: string } };
};

/** A 4xx whose body is our JSON-RPC error envelope; returns the error. */
async function refusal(res: Response, status?: number): Promise<RpcError['error']> {
  if (status !== undefined) expect(res.status).toBe(status);
  expect(res.status).toBeGreaterThanOrEqual(400);
  expect(res.status).toBeLessThan(500);
  const body = (await res.json()) as RpcError;
  expect(body.jsonrpc).toBe('2.0');
  expect(typeof body.error.data.code).toBe('string');
  expect(body.error.data.request_id).toBe(res.headers.get('x-request-id'));
  return body.error;
}

async function stillServing(): Promise<void> {
  const res = await rawPost(svc.mcpUrl, call('site_identity'), bearer(subscriber));
  expect(res.status).toBe(200);
  expect((await res.json()) as { result: { structuredContent: { name: string } } }).toMatchObject({
    result: { structuredContent: { name: expect.any(String) } },
  });
  expect((await svc.dispatch('stats.get', {})).ok).toBe(true);
  expect((await svc.dispatch('settings.update', { audit_retention_days: 90 })).ok).toBe(true);
}

async function optionsSize(): Promise<number> {
  await svc.core.stats.flush();
  await svc.core.options.flush();
  return (await stat(join(svc.dataDir, 'options.json'))).size;
}

/** A seeded PRNG (mulberry32): the same seed, the same run. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!,
  };
}
/** C0, DEL and C1 control characters. */
const hasControl = (s: string) =>
  [...s].some((ch) => ch.charCodeAt(0) < 0x20 || (ch.charCodeAt(0) >= 0x7f && ch.charCodeAt(0) <= 0x9f));
const SEED = Number(process.env.GATEHOUSE_FUZZ_SEED ?? 20261122);

describe('a token holder cannot break the gateway', () => {
  it('a subscriber calling a tool named __proto__ (or constructor, toString...) gets unknown_tool, and everything keeps working', async () => {
    for (const name of [
      '__proto__',
      'constructor',
      'prototype',
      'toString',
      'hasOwnProperty',
      'valueOf',
      '__defineGetter__',
    ]) {
      const res = await rawPost(svc.mcpUrl, call(name), bearer(subscriber));
      expect(res.status).toBe(200);
      const body = (await res.json()) as RpcError;
      expect(body.error).toMatchObject({ code: -32602, data: { code: 'unknown_tool' } });
    }
    expect(({} as Record<string, unknown>).denied).toBeUndefined();
    await stillServing();
    const stats = (await svc.dispatch('stats.get', {})) as {
      ok: true;
      data: { tools: Record<string, Record<string, number>> };
    };
    expect(Object.hasOwn(stats.data.tools, '__proto__')).toBe(false);
    expect(stats.data.tools[UNKNOWN_TOOL]?.denied).toBeGreaterThanOrEqual(7);
  });

  it('a 5,000-character unknown tool name leaves the stats file unchanged in size', async () => {
    // one short unknown name first, so the bucket and this hour exist
    await rawPost(svc.mcpUrl, call('not_a_tool'), bearer(subscriber));
    const before = await optionsSize();
    const res = await rawPost(svc.mcpUrl, call(`x${'y'.repeat(4_999)}`), bearer(subscriber));
    expect(res.status).toBe(200);
    const after = await optionsSize();
    // the counters may gain a digit; never the name
    expect(after - before).toBeLessThanOrEqual(2);
    expect(after).toBeLessThan(before + 100);
  });

  it('hundreds of invented names do not grow the options file', async () => {
    const before = await optionsSize();
    for (let i = 0; i < 300; i++)
      await rawPost(svc.mcpUrl, call(`invented_${i}_${'z'.repeat(200)}`, i), bearer(subscriber));
    expect(await optionsSize()).toBeLessThan(before + 20);
    await stillServing();
  });

  it('what the audit keeps of a made-up name or client name is bounded and free of control characters', async () => {
    // (a lone surrogate never gets this far: the JSON parser refuses it, see below)
    const res = await rawPost(
      svc.mcpUrl,
      {
        ...INIT,
        params: { ...INIT.params, clientInfo: { name: `evil\u001b[2J\u0007\u009b${'n'.repeat(300)}`, version: '1' } },
      },
      bearer(subscriber),
    );
    expect(res.status).toBe(200);
    await rawPost(svc.mcpUrl, call(`bad\u0000name\u001b${'q'.repeat(400)}`), bearer(subscriber));
    await svc.core.audit.flush();
    const [entry] = (await svc.core.audit.query({ result: 'denied', limit: 1 })).entries;
    expect(entry!.tool.length).toBeLessThanOrEqual(128);
    expect(hasControl(entry!.tool)).toBe(false);
    expect(entry!.client!.length).toBeLessThanOrEqual(80);
    expect(hasControl(entry!.client!)).toBe(false);
    expect(entry!.client).not.toMatch(/[\ud800-\udfff]/);
  });
});

describe('every malformed request is a 4xx with the right JSON-RPC error and data.code', () => {
  const cases: Array<{
    name: string;
    body: string | object;
    headers?: Record<string, string>;
    status: number;
    rpc: number;
    code: string;
  }> = [
    { name: 'not JSON', body: '{"jsonrpc":', status: 400, rpc: -32700, code: 'parse_error' },
    {
      name: 'JSON nested 5,000 deep',
      body: `${'['.repeat(5_000)}${']'.repeat(5_000)}`,
      status: 400,
      rpc: -32700,
      code: 'parse_error',
    },
    {
      name: 'a lone surrogate escape',
      body: '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\\ud800"}}',
      status: 400,
      rpc: -32700,
      code: 'parse_error',
    },
    { name: 'an empty body', body: '', status: 400, rpc: -32700, code: 'parse_error' },
    { name: 'a number', body: '42', status: 400, rpc: -32600, code: 'invalid_request' },
    { name: 'null', body: 'null', status: 400, rpc: -32600, code: 'invalid_request' },
    { name: 'a string', body: '"tools/list"', status: 400, rpc: -32600, code: 'invalid_request' },
    {
      name: 'a batch',
      body: [call('site_identity', 1), call('site_identity', 2)],
      status: 400,
      rpc: -32600,
      code: 'invalid_request',
    },
    { name: 'an empty batch', body: [], status: 400, rpc: -32600, code: 'invalid_request' },
    { name: 'no jsonrpc member', body: { id: 1, method: 'ping' }, status: 400, rpc: -32600, code: 'invalid_request' },
    {
      name: 'params a string',
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: 'site_identity' },
      status: 400,
      rpc: -32600,
      code: 'invalid_request',
    },
    {
      name: 'params an array',
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: [] },
      status: 400,
      rpc: -32600,
      code: 'invalid_request',
    },
    {
      name: 'an object id',
      body: { jsonrpc: '2.0', id: { a: 1 }, method: 'ping' },
      status: 400,
      rpc: -32600,
      code: 'invalid_request',
    },
    {
      name: 'an id past 2^53',
      body: '{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}',
      status: 400,
      rpc: -32600,
      code: 'invalid_request',
    },
    {
      name: 'a 100 KB string id',
      body: { jsonrpc: '2.0', id: 'i'.repeat(100_000), method: 'ping' },
      status: 400,
      rpc: -32600,
      code: 'invalid_request',
    },
    {
      name: 'a tool name that is a number',
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 5 } },
      status: 400,
      rpc: -32602,
      code: 'invalid_params',
    },
    {
      name: 'arguments that are an array',
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'site_identity', arguments: [1] } },
      status: 400,
      rpc: -32602,
      code: 'invalid_params',
    },
    {
      name: 'a resource URI that is not a string',
      body: { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: {} } },
      status: 400,
      rpc: -32602,
      code: 'invalid_params',
    },
    {
      name: 'an Mcp-Method header naming another method',
      body: call('site_identity'),
      headers: { 'Mcp-Method': 'tools/list' },
      status: 400,
      rpc: -32600,
      code: 'invalid_request',
    },
    {
      name: 'a 2026-07-28 header without the envelope',
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      headers: { 'MCP-Protocol-Version': '2026-07-28' },
      status: 400,
      rpc: -32602,
      code: 'invalid_params',
    },
    {
      name: 'an unsupported protocol version',
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      headers: { 'MCP-Protocol-Version': '1999-01-01' },
      status: 400,
      rpc: -32022,
      code: 'unsupported_protocol_version',
    },
    {
      name: 'a 2026-07-28 envelope whose Mcp-Method header names another method',
      body: modern('tools/list'),
      headers: { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call' },
      status: 400,
      rpc: -32020,
      code: 'invalid_request',
    },
    {
      name: 'a 2026-07-28 envelope without the Mcp-Method header',
      body: modern('tools/list'),
      headers: { 'MCP-Protocol-Version': '2026-07-28' },
      status: 400,
      rpc: -32020,
      code: 'invalid_request',
    },
    {
      name: 'an envelope claiming a revision we do not serve',
      body: modern('tools/list', '2099-01-01'),
      headers: { 'MCP-Protocol-Version': '2099-01-01', 'Mcp-Method': 'tools/list' },
      status: 400,
      rpc: -32022,
      code: 'unsupported_protocol_version',
    },
    {
      name: 'a text/plain body',
      body: JSON.stringify(call('site_identity')),
      headers: { 'Content-Type': 'text/plain' },
      status: 415,
      rpc: -32600,
      code: 'invalid_request',
    },
    {
      name: 'an Accept without text/event-stream',
      body: call('site_identity'),
      headers: { Accept: 'application/json' },
      status: 406,
      rpc: -32600,
      code: 'invalid_request',
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const res = await rawPost(svc.mcpUrl, c.body, { ...bearer(subscriber), ...c.headers });
      const err = await refusal(res, c.status);
      expect({ rpc: err.code, code: err.data.code }).toEqual({ rpc: c.rpc, code: c.code });
    });
  }

  it('answers the JSON-RPC id of the refused request when it is one we may echo', async () => {
    const res = await rawPost(
      svc.mcpUrl,
      { jsonrpc: '2.0', id: 'abc', method: 'tools/call', params: { name: 5 } },
      bearer(subscriber),
    );
    expect(((await res.json()) as RpcError).id).toBe('abc');
  });
});

describe('resources follow the tools they mirror, and reads are audited', () => {
  it('a token narrowed away from pages_list, or pages_list disabled, cannot read the page index', async () => {
    const narrow = (await svc.createToken({ label: 'narrow', scope: { tools: ['site_identity'] } })).token;
    const client = await connectClient(svc.mcpUrl, narrow);
    try {
      const uris = (await client.listResources()).resources.map((r) => r.uri);
      expect(uris).toContain('gatehouse://manual');
      expect(uris).toContain('gatehouse://site/identity');
      expect(uris).not.toContain('gatehouse://site/pages');
      await expect(client.readResource({ uri: 'gatehouse://site/pages' })).rejects.toThrow(/resource not found/);
    } finally {
      await client.close();
    }
    const wide = await connectClient(svc.mcpUrl, admin);
    try {
      expect((await wide.readResource({ uri: 'gatehouse://site/pages' })).contents).toHaveLength(1);
      await svc.dispatch('settings.update', { disabled_tools: ['pages_list'] });
      await expect(wide.readResource({ uri: 'gatehouse://site/pages' })).rejects.toThrow(/resource not found/);
      expect((await wide.listResources()).resources.map((r) => r.uri)).not.toContain('gatehouse://site/pages');
    } finally {
      await svc.dispatch('settings.update', { disabled_tools: [] });
      await wide.close();
    }
    await svc.core.audit.flush();
    const reads = (await svc.core.audit.query({ tool: RESOURCE_READ, limit: 10 })).entries;
    expect(reads.map((e) => [e.result, e.target])).toEqual([
      ['denied', 'gatehouse://site/pages'],
      ['ok', 'gatehouse://site/pages'],
      ['denied', 'gatehouse://site/pages'],
    ]);
  });

  it('answers resources/templates/list (empty)', async () => {
    const client = await connectClient(svc.mcpUrl, subscriber);
    try {
      expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe('HTTP refusals are audited, at a bounded rate', () => {
  it('401, 403, 413 and gateway-off refusals are audited with the address and never a token', async () => {
    const before = (await svc.core.audit.query({ tool: HTTP_REFUSAL, limit: 1000 })).entries.length;
    await rawPost(svc.mcpUrl, INIT, { Authorization: `Bearer gth_${'Q'.repeat(43)}` });
    await rawPost(svc.mcpUrl, INIT, { ...bearer(subscriber), Origin: 'https://evil.example' });
    await rawPost(svc.mcpUrl, JSON.stringify({ pad: 'x'.repeat(5 * 1024 * 1024) }), bearer(subscriber));
    await svc.dispatch('settings.update', { enabled: false });
    await rawPost(svc.mcpUrl, INIT, bearer(subscriber));
    await svc.dispatch('settings.update', { enabled: true });
    await svc.core.audit.flush();
    const entries = (await svc.core.audit.query({ tool: HTTP_REFUSAL, limit: 1000 })).entries.slice(
      0,
      -before || undefined,
    );
    expect(entries.map((e) => e.error_code).sort()).toEqual([
      'forbidden',
      'gateway_disabled',
      'payload_too_large',
      'unauthorized',
    ]);
    for (const e of entries) {
      expect(e.client).toMatch(/^address (127\.0\.0\.1|::ffff:127\.0\.0\.1)$/);
      expect(JSON.stringify(e)).not.toContain('gth_Q');
      expect(JSON.stringify(e)).not.toContain(subscriber);
    }
  });

  it('a flood of bad tokens writes at most a bounded number of entries a minute, and says how many it skipped', async () => {
    // its own service on a clock that only the test moves: the bound is per minute
    const clock = new TestClock();
    const own = await startTestService({ clock });
    try {
      await own.dispatch('settings.update', { rate_limit: 0 });
      const flood = REFUSALS_AUDITED_PER_MINUTE + 140;
      for (let i = 0; i < flood; i++)
        await rawPost(own.mcpUrl, INIT, { Authorization: `Bearer gth_${String(i).padStart(43, 'F')}` });
      const entries = async () => {
        await own.core.audit.flush();
        return (await own.core.audit.query({ tool: HTTP_REFUSAL, limit: 1000 })).entries.filter(
          (e) => e.error_code === 'unauthorized',
        );
      };
      expect(await entries()).toHaveLength(REFUSALS_AUDITED_PER_MINUTE);
      clock.advance(61_000);
      await rawPost(own.mcpUrl, INIT, { Authorization: 'Bearer nonsense' });
      const after = await entries();
      expect(after).toHaveLength(REFUSALS_AUDITED_PER_MINUTE + 1);
      expect(after[0]!.target).toBe(
        `140 earlier unauthorized refusal(s) not audited (over ${REFUSALS_AUDITED_PER_MINUTE} a minute)`,
      );
    } finally {
      await own.cleanup();
    }
  });
});

describe('the body is not read before the token has budget left', () => {
  it('a token over its rate limit gets 429 while its 4 MiB upload has not even been sent', async () => {
    const limited = (await svc.createToken({ label: 'budget', user: 'sub' })).token;
    await svc.dispatch('settings.update', { rate_limit: 2 });
    try {
      for (let i = 0; i < 2; i++)
        expect((await rawPost(svc.mcpUrl, call('site_identity'), bearer(limited))).status).toBe(200);
      const url = new URL(svc.mcpUrl);
      const [status, connection] = await new Promise<[number, string | undefined]>((resolve, reject) => {
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            headers: {
              ...bearer(limited),
              'Content-Type': 'application/json',
              Accept: 'application/json, text/event-stream',
              'Content-Length': String(4 * 1024 * 1024 - 1),
            },
          },
          (res) => {
            res.resume();
            resolve([res.statusCode ?? 0, res.headers.connection]);
            req.destroy();
          },
        );
        req.on('error', (e) => (e.message.includes('socket hang up') ? undefined : reject(e)));
        // headers and a few bytes only: the answer must not wait for the rest
        req.write('{"jsonrpc":"2.0",');
      });
      expect(status).toBe(429);
      // and the connection is closed after the answer, rather than the rest of the upload read
      expect(connection).toBe('close');
    } finally {
      await svc.dispatch('settings.update', { rate_limit: 100_000 });
    }
  });
});

describe(`fuzz (seed ${SEED}; replay with GATEHOUSE_FUZZ_SEED=${SEED})`, () => {
  it('tool names a client makes up: never a 5xx, never a new stats key, never a polluted prototype', async () => {
    console.log(`fuzz seed (keys): ${SEED}`);
    const r = prng(SEED);
    const parts = [
      '__proto__',
      'constructor',
      'prototype',
      'toString',
      '__defineSetter__',
      'valueOf',
      '\u0000',
      '\ud800',
      '\udfff',
      '😀',
      'é',
      '/',
      '.',
      '..',
      '%00',
      'a'.repeat(300),
      ' ',
      '\u202e',
      'site_identity',
    ];
    const before = await optionsSize();
    for (let i = 0; i < 150; i++) {
      const name = Array.from({ length: 1 + r.int(4) }, () => r.pick(parts)).join(r.pick(['', '_', '.', '-']));
      if (name === 'site_identity') continue;
      const res = await rawPost(svc.mcpUrl, call(name, i), bearer(subscriber));
      expect(res.status, JSON.stringify(name)).toBeLessThan(500);
    }
    expect(({} as Record<string, unknown>).denied).toBeUndefined();
    const stats = (await svc.dispatch('stats.get', {})) as { ok: true; data: { tools: Record<string, unknown> } };
    const known = new Set([
      ...svc.core.registry.all().map((e) => e.tool.name),
      UNKNOWN_TOOL,
      RESOURCE_READ,
      HTTP_REFUSAL,
    ]);
    for (const key of Object.keys(stats.data.tools)) expect(known.has(key), key).toBe(true);
    expect(await optionsSize()).toBeLessThan(before + 20);
    await stillServing();
  });

  it('malformed bodies: always a 4xx JSON-RPC error with data.code, never a 5xx', async () => {
    console.log(`fuzz seed (bodies): ${SEED}`);
    const r = prng(SEED + 1);
    const values: unknown[] = [
      null,
      true,
      0,
      -1,
      1.5,
      2 ** 60,
      '',
      'x',
      [],
      {},
      [1],
      { a: 1 },
      'tools/call',
      '\ud800',
      '__proto__',
    ];
    const keys = [
      'jsonrpc',
      'id',
      'method',
      'params',
      'result',
      'error',
      '__proto__',
      'name',
      'arguments',
      '_meta',
      'uri',
    ];
    const mutate = (base: Record<string, unknown>): unknown => {
      const out: Record<string, unknown> = JSON.parse(JSON.stringify(base));
      for (let n = 1 + r.int(3); n > 0; n--) {
        const k = r.pick(keys);
        if (r.next() < 0.3) delete out[k];
        else if (k === 'params')
          out.params =
            r.next() < 0.5
              ? r.pick(values)
              : { name: r.pick(values), arguments: r.pick(values), uri: r.pick(values), _meta: r.pick(values) };
        else out[k] = r.pick(values);
      }
      return out;
    };
    const bases = [
      call('site_identity'),
      INIT,
      { jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 'gatehouse://manual' } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
    ];
    const texts = ['{', '[', '{"a":}', '\u0000', '{"jsonrpc":"2.0","id":1,"method":"ping"', `{"x":${'['.repeat(200)}`];
    for (let i = 0; i < 200; i++) {
      const body = r.next() < 0.15 ? r.pick(texts) : JSON.stringify(mutate(r.pick(bases)));
      const res = await rawPost(svc.mcpUrl, body, bearer(subscriber));
      expect(res.status, body.slice(0, 200)).toBeLessThan(500);
      if (res.status >= 400) {
        const json = (await res.json()) as RpcError;
        expect(typeof json.error?.data?.code, body.slice(0, 200)).toBe('string');
      } else {
        await res.text();
      }
    }
    await stillServing();
  });
});
