import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../../main/contract/audit.ts';
import { EVERYTHING, startUpstreamWorld, textOf, until, type UpstreamWorld } from './upstream-world.ts';
import { startModernUpstream, type ModernUpstream } from '../../fixtures/upstream/modern-upstream.ts';
import { rawPost } from '../../helpers/service.ts';

/** What an upstream asks of the client mid-call (elicitation, sampling) reaches the Gatehouse client that made the call. */
let u: UpstreamWorld;
let modern: ModernUpstream;

const ASKERS = ['trigger-elicitation-request', 'trigger-sampling-request'];

/** A real SDK v2 client (2025 era) that declares `capabilities` and answers what it is asked, noting each request. */
async function clientWith(
  capabilities: Record<string, unknown>,
  seen: string[] = [],
  era: 'legacy' | 'modern' = 'legacy',
  token = u.token,
): Promise<Client> {
  const c = new Client(
    { name: 'relay-test', version: '1.0.0' },
    { capabilities, versionNegotiation: { mode: era === 'legacy' ? 'legacy' : { pin: '2026-07-28' } } },
  );
  if ('elicitation' in capabilities) {
    c.setRequestHandler('elicitation/create', async (req) => {
      const p = req.params as { message: string; mode?: string };
      seen.push(`elicitation:${p.message.slice(0, 20)}`);
      if (p.mode === 'url') return { action: 'accept' } as never;
      return {
        action: 'accept',
        content: p.message.startsWith('Confirm')
          ? { ok: true }
          : { name: 'Ada Lovelace', check: true, integer: 3, email: 'ada@example.com' },
      } as never;
    });
  }
  if ('sampling' in capabilities) {
    c.setRequestHandler('sampling/createMessage', async () => {
      seen.push('sampling');
      return {
        role: 'assistant',
        content: { type: 'text', text: 'sampled-answer-42' },
        model: 'test-model',
        stopReason: 'endTurn',
      } as never;
    });
  }
  await c.connect(
    new StreamableHTTPClientTransport(new URL(u.w.svc.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return c;
}

const audited = async (tool: string) => {
  const page = await u.ok<{ entries: AuditEntry[] }>('GET', `audit?tool=${encodeURIComponent(tool)}&limit=5`);
  return page.entries;
};

beforeAll(async () => {
  u = await startUpstreamWorld();
  await u.ok('POST', 'upstreams', {
    id: 'ev',
    transport: { kind: 'stdio', command: process.execPath, args: [EVERYTHING], env: [] },
    read: ASKERS,
  });
  modern = await startModernUpstream();
  // The same 2026-07-28 server under two ids: a requestState one issued must not work for the other.
  for (const id of ['ma', 'mb'])
    await u.ok('POST', 'upstreams', { id, transport: { kind: 'http', url: modern.url, headers: [] } });
  // The same two servers with a short timeout: a person answering a form must not run into it.
  await u.ok('POST', 'upstreams', {
    id: 'evq',
    transport: { kind: 'stdio', command: process.execPath, args: [EVERYTHING], env: [] },
    read: ASKERS,
    timeout_ms: 400,
  });
  await u.ok('POST', 'upstreams', {
    id: 'mq',
    transport: { kind: 'http', url: modern.url, headers: [] },
    timeout_ms: 400,
  });
}, 120_000);
afterAll(async () => {
  await u?.stop();
  await modern?.stop();
});

describe('server-everything (2025 era, stdio) asking the client mid-call', () => {
  it('an elicitation reaches a client that declared it, its answer goes back, and the audit names what was asked (no values)', async () => {
    const seen: string[] = [];
    const c = await clientWith({ elicitation: { form: {} } }, seen);
    try {
      const r = await c.callTool({ name: 'ev__trigger-elicitation-request', arguments: {} });
      expect(r.isError).toBeFalsy();
      expect(seen).toEqual([expect.stringMatching(/^elicitation:Please provide/)]);
      expect(textOf(r)).toContain('Ada Lovelace');
      const [entry] = await audited('ev__trigger-elicitation-request');
      expect(entry).toMatchObject({ result: 'ok', source_plugin: 'ev', asked: 'elicitation/create:form' });
      expect(JSON.stringify(entry)).not.toContain('Ada');
    } finally {
      await c.close();
    }
  });

  it('a sampling request reaches a client that declared sampling', async () => {
    const seen: string[] = [];
    const c = await clientWith({ sampling: {} }, seen);
    try {
      const r = await c.callTool({ name: 'ev__trigger-sampling-request', arguments: { prompt: 'say something' } });
      expect(r.isError).toBeFalsy();
      expect(seen).toEqual(['sampling']);
      expect(textOf(r)).toContain('sampled-answer-42');
      expect((await audited('ev__trigger-sampling-request'))[0]).toMatchObject({
        result: 'ok',
        asked: 'sampling/createMessage',
      });
    } finally {
      await c.close();
    }
  });

  it('a client without the capability: the call fails with client_capability_missing naming it, and nothing is asked', async () => {
    const seen: string[] = [];
    const c = await clientWith({}, seen);
    try {
      const r = await c.callTool({ name: 'ev__trigger-elicitation-request', arguments: {} });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(
        /^client_capability_missing: upstream 'ev' asks the client for elicitation\/create:form .*'elicitation' capability/,
      );
      const s = await c.callTool({ name: 'ev__trigger-sampling-request', arguments: { prompt: 'x' } });
      expect(textOf(s)).toMatch(/^client_capability_missing: .*'sampling' capability/);
      expect(seen).toEqual([]);
      expect((await audited('ev__trigger-sampling-request'))[0]).toMatchObject({
        result: 'error',
        error_code: 'client_capability_missing',
      });
    } finally {
      await c.close();
    }
  });
});

type Asked = { resultType?: string; inputRequests?: Record<string, unknown>; requestState?: string };
const manual = (c: Client, name: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  c.callTool({ name, arguments: args, ...extra } as never, { allowInputRequired: true } as never) as Promise<
    Asked & { isError?: boolean; content?: Array<{ text?: string }> }
  >;

describe('the upstream timeout while the client is asked', () => {
  /** A 2025 client whose person takes `ms` to fill in each form. */
  async function slowClient(ms: number): Promise<Client> {
    const c = new Client(
      { name: 'slow-person', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'legacy' } },
    );
    c.setRequestHandler('elicitation/create', async (req) => {
      await new Promise((r) => setTimeout(r, ms));
      const message = (req.params as { message: string }).message;
      return {
        action: 'accept',
        content: message.startsWith('Confirm')
          ? { ok: true }
          : { name: 'Ada Lovelace', check: true, integer: 3, email: 'ada@example.com' },
      } as never;
    });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(u.w.svc.mcpUrl), {
        requestInit: { headers: { Authorization: `Bearer ${u.token}` } },
      }),
    );
    return c;
  }

  it('does not run while the client answers a form a 2025-era upstream asked for (timeout 400 ms, the answer takes 1.2 s)', async () => {
    const c = await slowClient(1200);
    try {
      const r = await c.callTool({ name: 'evq__trigger-elicitation-request', arguments: {} });
      expect(textOf(r)).toContain('Ada Lovelace');
      expect(r.isError).toBeFalsy();
    } finally {
      await c.close();
    }
  });

  it("nor while it answers a 2026-07-28 upstream's input request between rounds", async () => {
    const c = await slowClient(1200);
    try {
      expect(textOf(await c.callTool({ name: 'mq__confirm', arguments: { word: 'slow' } }))).toBe(
        'answered {"action":"accept","content":{"ok":true}} with state state-of-confirm-slow',
      );
    } finally {
      await c.close();
    }
  });

  it('still cancels an upstream that does not answer once the client has answered', async () => {
    const c = await slowClient(0);
    const aborted = modern.events.filter((e) => e === 'aborted wait').length;
    try {
      const r = await c.callTool({ name: 'mq__wait', arguments: {} });
      expect(textOf(r)).toMatch(/^timeout: upstream 'mq' did not answer within 0.4 s/);
      await until(
        () => modern.events.filter((e) => e === 'aborted wait').length > aborted,
        10_000,
        'the upstream to see the cancellation',
      );
    } finally {
      await c.close();
    }
  });
});

/** One raw 2026-07-28 request with the token, declaring `caps`. */
const modernPost = (method: string, params: Record<string, unknown>, caps: Record<string, unknown>) =>
  rawPost(
    u.w.svc.mcpUrl,
    {
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': caps,
        },
      },
    },
    {
      Authorization: `Bearer ${u.token}`,
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
      ...(typeof params.name === 'string' ? { 'Mcp-Name': params.name } : {}),
    },
  );

describe('a 2026-07-28 client and a 2025-era upstream asking mid-call', () => {
  it('a client that did not declare the capability: HTTP 400 -32021 naming it, nothing asked', async () => {
    for (const [name, args, required] of [
      ['ev__trigger-elicitation-request', {}, { elicitation: {} }],
      ['ev__trigger-sampling-request', { prompt: 'x' }, { sampling: {} }],
    ] as const) {
      const res = await modernPost('tools/call', { name, arguments: args }, {});
      expect(res.status, name).toBe(400);
      const body = (await res.json()) as { error: { code: number; data: Record<string, unknown> } };
      expect(body.error, name).toMatchObject({
        code: -32021,
        data: { requiredCapabilities: required, code: 'client_capability_missing', upstream: 'ev' },
      });
    }
  });

  it('cannot be asked then (no server-to-client requests in 2026-07-28): the call fails with client_capability_missing saying why', async () => {
    const seen: string[] = [];
    const c = await clientWith({ elicitation: { form: {} } }, seen, 'modern');
    try {
      const r = await c.callTool({ name: 'ev__trigger-elicitation-request', arguments: {} });
      expect(textOf(r)).toMatch(
        /^client_capability_missing: upstream 'ev' asks for elicitation\/create:form in the middle of the call, and this client cannot be asked then \(a 2026-07-28 client/,
      );
      expect(seen).toEqual([]);
    } finally {
      await c.close();
    }
  });
});

describe('a 2026-07-28 upstream asking for input (input_required)', () => {
  it("a 2026-07-28 client gets the input request with a wrapped requestState; its retry reaches the upstream with the upstream's own state", async () => {
    const seen: string[] = [];
    const c = await clientWith({ elicitation: { form: {} }, sampling: {} }, seen, 'modern');
    try {
      const first = await manual(c, 'ma__confirm', { word: 'tea' });
      expect(first.resultType).toBe('input_required');
      expect(first.inputRequests).toMatchObject({
        confirm: { method: 'elicitation/create', params: { message: 'Confirm tea?' } },
      });
      expect(first.requestState).toMatch(/^v1\./);
      expect(first.requestState).not.toBe('state-of-confirm-tea');
      // The SDK client fulfils it itself (its handler answers) and retries with the state as given.
      const r = await c.callTool({ name: 'ma__confirm', arguments: { word: 'tea' } });
      expect(textOf(r)).toBe('answered {"action":"accept","content":{"ok":true}} with state state-of-confirm-tea');
      expect(seen).toEqual(['elicitation:Confirm tea?']);
      const s = await c.callTool({ name: 'ma__sample', arguments: { prompt: 'hi' } });
      expect(textOf(s)).toMatch(/^sampled .*sampled-answer-42.* with state state-of-sample-/);
      // Each round is a call of its own: the one that asked says what, the answered retry is a plain one.
      const [retry, asking] = await audited('ma__confirm');
      expect(asking).toMatchObject({ result: 'ok', source_plugin: 'ma', asked: 'elicitation/create:form' });
      expect(retry).toMatchObject({ result: 'ok', source_plugin: 'ma' });
      expect(retry!.asked ?? null).toBeNull();
    } finally {
      await c.close();
    }
  });

  it('a 2025 client is asked by Gatehouse itself and the upstream gets its answers in the retry', async () => {
    const seen: string[] = [];
    const c = await clientWith({ elicitation: { form: {}, url: {} } }, seen);
    try {
      expect(textOf(await c.callTool({ name: 'ma__confirm', arguments: { word: 'milk' } }))).toBe(
        'answered {"action":"accept","content":{"ok":true}} with state state-of-confirm-milk',
      );
      expect(textOf(await c.callTool({ name: 'ma__visit', arguments: {} }))).toBe('visited {"action":"accept"}');
      expect(seen).toEqual(['elicitation:Confirm milk?', 'elicitation:Sign in']);
    } finally {
      await c.close();
    }
  });

  it('without the capability (URL mode needs elicitation.url): -32021 naming only what is missing, nothing asked', async () => {
    const c = await clientWith({ elicitation: { form: {} } }, [], 'modern');
    try {
      const refused = await manual(c, 'ma__visit', {}).then(
        () => null,
        (e: unknown) => e as { code?: number; message?: string; data?: Record<string, unknown> },
      );
      // the SDK client's MissingRequiredClientCapabilityError keeps the spec's part of data
      expect(refused).toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: { url: {} } } } });
      expect(refused!.message).toMatch(/'elicitation.url' capability/);
      expect((await audited('ma__visit'))[0]).toMatchObject({
        result: 'error',
        error_code: 'client_capability_missing',
      });
    } finally {
      await c.close();
    }
  });

  it('the same refusal on the wire: HTTP 400, -32021 with data.requiredCapabilities, audited once (by the call)', async () => {
    const before = (await audited('ma__sample')).length;
    const res = await modernPost(
      'tools/call',
      { name: 'ma__sample', arguments: { prompt: 'hi' } },
      { elicitation: {} },
    );
    expect(res.status).toBe(400);
    const body = (await res.json()) as { id: unknown; error: { code: number; data: Record<string, unknown> } };
    expect(body.id).toBe(1);
    expect(body.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { sampling: {} }, code: 'client_capability_missing' },
    });
    expect(typeof body.error.data.request_id).toBe('string');
    const entries = await audited('ma__sample');
    expect(entries.length).toBe(before + 1);
    expect(entries[0]).toMatchObject({ result: 'error', error_code: 'client_capability_missing' });
    const refusals = await u.ok<{ entries: AuditEntry[] }>('GET', 'audit?tool=(http%20refusal)&limit=20');
    expect(refusals.entries.filter((e) => e.request_id === body.error.data.request_id)).toEqual([]);
  });

  it('a forged requestState, one replayed against another upstream, and one replayed with another token are refused, each audited with its reason', async () => {
    const c = await clientWith({ elicitation: { form: {} } }, [], 'modern');
    const other = await u.w.svc.createToken({ label: 'other', user: 'admin' });
    const c2 = await clientWith({ elicitation: { form: {} } }, [], 'modern', other.token);
    const mine = (await u.ok<Array<{ id: string; label: string }>>('GET', 'tokens')).find(
      (t) => t.label === 'upstream tests',
    )!.id;
    /** the newest audit line of `tool`: a denial by `token` for `reason` */
    const refusal = async (tool: string, token: string, reason: string) =>
      expect((await audited(tool))[0]).toMatchObject({
        result: 'denied',
        error_code: 'invalid_params',
        source_plugin: tool.slice(0, 2),
        reason,
        token_id: token,
        principal: { kind: 'token', token_id: token },
      });
    try {
      const { requestState } = await manual(c, 'ma__confirm', { word: 'tea' });
      const answers = { inputResponses: { confirm: { action: 'accept', content: { ok: true } } } };
      const [body, mac] = [
        requestState!.slice(0, requestState!.lastIndexOf('.')),
        requestState!.slice(requestState!.lastIndexOf('.') + 1),
      ];
      const forged = `${body}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;
      await expect(manual(c, 'ma__confirm', { word: 'tea' }, { ...answers, requestState: forged })).rejects.toThrow(
        /Invalid or expired requestState/,
      );
      await refusal('ma__confirm', mine, 'the requestState was not issued by Gatehouse (its signature does not match)');
      await expect(
        manual(c, 'ma__confirm', { word: 'tea' }, { ...answers, requestState: 'v1.not-a-state' }),
      ).rejects.toThrow(/Invalid or expired requestState/);
      await refusal('ma__confirm', mine, 'the requestState is malformed');
      await expect(manual(c2, 'ma__confirm', { word: 'tea' }, { ...answers, requestState })).rejects.toThrow(
        /Invalid or expired requestState/,
      );
      await refusal('ma__confirm', other.record.id, 'the requestState was issued to another token');
      const replayed = await manual(c, 'mb__confirm', { word: 'tea' }, { ...answers, requestState });
      expect(textOf(replayed)).toMatch(
        /^invalid_params: the requestState was issued for another tool \('ma__confirm'\)/,
      );
      await refusal('mb__confirm', mine, 'the requestState was issued for another tool');
      const otherCall = await manual(c, 'ma__confirm', { word: 'coffee' }, { ...answers, requestState });
      expect(textOf(otherCall)).toMatch(/^invalid_params: the requestState was issued for another call/);
      await refusal('ma__confirm', mine, 'the requestState was issued for another call (other arguments)');
      // never the state's contents: neither the wrapped state nor the upstream's own
      const lines = JSON.stringify(await u.ok('GET', 'audit?limit=50'));
      for (const part of [body.slice(3, 40), mac.slice(0, 20), 'state-of-confirm-tea'])
        expect(lines).not.toContain(part);
      // the real one still works
      expect(textOf(await manual(c, 'ma__confirm', { word: 'tea' }, { ...answers, requestState }))).toBe(
        'answered {"action":"accept","content":{"ok":true}} with state state-of-confirm-tea',
      );
    } finally {
      await c.close();
      await c2.close();
    }
  });
});

describe('headers toward a 2026-07-28 upstream', () => {
  it("Mcp-Name carries the upstream's own tool name and an x-mcp-header parameter is mirrored into Mcp-Param-*", async () => {
    const c = await clientWith({});
    try {
      const seen = JSON.parse(
        textOf(await c.callTool({ name: 'ma__route', arguments: { region: 'eu-west', q: 'x' } })),
      ) as Record<string, string>;
      expect(seen).toMatchObject({ 'mcp-method': 'tools/call', 'mcp-name': 'route', 'mcp-param-region': 'eu-west' });
      expect(JSON.stringify(modern.headers)).not.toContain('ma__route');
    } finally {
      await c.close();
    }
  });
});

describe('cancellation', () => {
  const count = (event: string) => modern.events.filter((e) => e === event).length;
  for (const era of ['legacy', 'modern'] as const) {
    it(`a ${era === 'legacy' ? '2025' : '2026-07-28'} client's cancellation reaches the upstream call in progress`, async () => {
      const c = await clientWith({}, [], era);
      const [started, aborted] = [count('started wait'), count('aborted wait')];
      try {
        const abort = new AbortController();
        const call = c.callTool({ name: 'ma__wait', arguments: {} }, { signal: abort.signal });
        await until(() => count('started wait') > started, 10_000, 'the upstream call');
        abort.abort('changed my mind');
        await expect(call).rejects.toThrow();
        await until(() => count('aborted wait') > aborted, 10_000, 'the upstream to see the cancellation');
      } finally {
        await c.close();
      }
    });
  }

  it("two 2025 calls of one token with the same request id (two clients sharing it) both run; neither takes the other's cancellation route", async () => {
    const post = (body: unknown, signal: AbortSignal = AbortSignal.timeout(10_000)) =>
      fetch(u.w.svc.mcpUrl, {
        method: 'POST',
        signal,
        body: JSON.stringify(body),
        headers: {
          Authorization: `Bearer ${u.token}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2025-11-25',
        },
      });
    const call = { jsonrpc: '2.0', id: 'same-id', method: 'tools/call', params: { name: 'ma__wait', arguments: {} } };
    const [started, aborted] = [count('started wait'), count('aborted wait')];
    const firstAnswer = post(call).catch(() => null);
    await until(() => count('started wait') > started, 10_000, 'the first call');
    const second = new AbortController();
    const secondAnswer = post(call, second.signal).catch(() => null);
    await until(() => count('started wait') > started + 1, 10_000, 'the second call, with the same id');

    // The second client goes away (its call is cancelled with its connection); the first call's route is still there.
    second.abort();
    await secondAnswer;
    await until(() => count('aborted wait') > aborted, 10_000, 'the second call to be cancelled');
    expect(
      (await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'same-id' } })).status,
    ).toBe(202);
    await until(() => count('aborted wait') > aborted + 1, 10_000, 'the cancellation to reach the first call');
    // A cancelled call gets no answer: its HTTP answer ends empty (and does not hang).
    const ended = await firstAnswer;
    expect(ended?.status).toBe(200);
    expect(await ended?.text()).toBe('');
  });

  it('an upstream that drops the call mid-way: a clear error to the client', async () => {
    const c = await clientWith({});
    try {
      const r = await c.callTool({ name: 'ma__drop', arguments: {} });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/^upstream_unavailable: upstream 'ma' went away during the call/);
    } finally {
      await c.close();
    }
  });
});
