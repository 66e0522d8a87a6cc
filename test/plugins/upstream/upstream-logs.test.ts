import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamView } from '../../../main/contract/upstreams.ts';
import {
  LOG_WINDOW_MS,
  LogRelay,
  MAX_LOG_DATA_CHARS,
  MAX_LOGS_PER_WINDOW,
  type LogMessage,
} from '../../../main/plugins/upstream/log-relay.ts';
import { LOGGING_META_KEY } from '../../../main/mcp/server-factory.ts';
import { EVERYTHING, REPO, startUpstreamWorld, textOf, until, type UpstreamWorld } from './upstream-world.ts';

/**
 * Upstreams' log messages (`notifications/message`) reach the clients of that upstream through Gatehouse,
 * named after it, masked and rate-bounded, in both protocol eras: a 2025 client on its GET stream, at the level
 * its logging/setLevel chose (sent on to the upstreams that declare logging, and only to them); a 2026-07-28
 * client on the stream of a call that names a level. server-everything's own simulated logging, and a small
 * real server (offers-upstream.mjs) that logs on request, through the real gateway with the SDK client.
 */
const OFFERS = `${REPO}test/fixtures/upstream/offers-upstream.mjs`;
const SECRET = 'k3y-9f2a77c1-log';
let u: UpstreamWorld;

type Heard = Array<{ level: string; logger?: string; data?: unknown }>;

async function client(era: 'legacy' | 'modern', token = u.token): Promise<{ c: Client; heard: Heard }> {
  const heard: Heard = [];
  const c = new Client(
    { name: 'logs-test', version: '1.0.0' },
    { versionNegotiation: { mode: era === 'legacy' ? 'legacy' : { pin: '2026-07-28' } } },
  );
  c.setNotificationHandler('notifications/message', (n) => void heard.push(n.params as Heard[number]));
  await c.connect(
    new StreamableHTTPClientTransport(new URL(u.w.svc.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return { c, heard };
}

const offers = (id: string, env: Array<{ name: string; value: string }> = []) => ({
  id,
  transport: { kind: 'stdio', command: process.execPath, args: [OFFERS], env },
});

const log = (c: Client, upstream: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
  c.callTool({ name: `${upstream}__log`, arguments: args, ...(meta ? { _meta: meta } : {}) });

/** Waits until the client's GET stream hears the gateway: a message logged until one arrives. */
async function streamOpen(c: Client, heard: Heard): Promise<void> {
  await until(
    async () => {
      await log(c, 'off', { level: 'emergency', data: 'is the stream open?' });
      return heard.some((m) => m.data === 'is the stream open?');
    },
    10_000,
    'the GET stream',
  );
  // the stream keeps the order: once this one is heard, every probe sent before it has been too
  await log(c, 'off', { level: 'emergency', data: 'the stream is open' });
  await until(() => heard.some((m) => m.data === 'the stream is open'), 10_000, 'the last probe');
  heard.length = 0;
}

const view = async (id: string) => (await u.ok<UpstreamView[]>('GET', 'upstreams')).find((x) => x.id === id)!;

beforeAll(async () => {
  u = await startUpstreamWorld();
  await u.ok('POST', 'upstreams', {
    id: 'ev',
    transport: { kind: 'stdio', command: process.execPath, args: [EVERYTHING], env: [] },
    // a write by its hints: it runs at once as a person's read, not staged
    read: ['toggle-simulated-logging'],
  });
  await u.ok('POST', 'upstreams', offers('off', [{ name: 'API_KEY', value: SECRET }]));
  await u.ok('POST', 'upstreams', offers('flood'));
  await u.ok('POST', 'upstreams', offers('mute', [{ name: 'NO_LOGGING', value: '1' }]));
}, 120_000);
afterAll(async () => {
  await u?.stop();
});

describe('2025 clients: the GET stream', () => {
  it("hears server-everything's own simulated log messages, named after the upstream", async () => {
    const { c, heard } = await client('legacy');
    try {
      await streamOpen(c, heard);
      await c.callTool({ name: 'ev__toggle-simulated-logging', arguments: {} });
      const m = await until(() => heard.find((x) => x.logger === 'ev'), 15_000, "server-everything's message");
      expect(String(m!.data)).toMatch(/-level message|level-message/);
    } finally {
      await c.callTool({ name: 'ev__toggle-simulated-logging', arguments: {} });
      await c.close();
    }
  }, 30_000);

  it("passes a message on as sent, its own logger after the upstream's id, masked of what the upstream was given", async () => {
    const { c, heard } = await client('legacy');
    try {
      await streamOpen(c, heard);
      await log(c, 'off', { level: 'notice', data: { rows: 3, note: 'fine' }, logger: 'db' });
      await log(c, 'off', { level: 'error', data: `the key is ${SECRET}` });
      await until(() => heard.length >= 2, 10_000, 'two messages');
      expect(heard[0]).toEqual({ level: 'notice', logger: 'off/db', data: { rows: 3, note: 'fine' } });
      expect(heard[1]!.logger).toBe('off');
      expect(String(heard[1]!.data)).toContain('the key is ');
      expect(String(heard[1]!.data)).not.toContain(SECRET);
    } finally {
      await c.close();
    }
  });

  it('reaches only tokens that see the upstream', async () => {
    const narrow = (await u.w.svc.createToken({ label: 'ev only', user: 'admin', scope: { plugins: ['ev'] } })).token;
    const { c: other, heard: otherHeard } = await client('legacy', narrow);
    const { c, heard } = await client('legacy');
    try {
      // the narrow token's own stream is open once it hears ev (it sees no `off`)
      await other.callTool({ name: 'ev__toggle-simulated-logging', arguments: {} });
      await until(() => otherHeard.some((m) => m.logger === 'ev'), 15_000, "ev's message on the narrow token");
      await other.callTool({ name: 'ev__toggle-simulated-logging', arguments: {} });
      await streamOpen(c, heard);
      await log(c, 'off', { level: 'alert', data: 'for those who see off' });
      await until(() => heard.some((m) => m.data === 'for those who see off'), 10_000, 'the message');
      // a message after it on the narrow token's stream: had `off`'s reached it, it would have come first
      const seen = otherHeard.length;
      await other.callTool({ name: 'ev__toggle-simulated-logging', arguments: {} });
      await until(() => otherHeard.length > seen, 15_000, "ev's next message on the narrow token");
      await other.callTool({ name: 'ev__toggle-simulated-logging', arguments: {} });
      expect(otherHeard.some((m) => m.logger?.startsWith('off'))).toBe(false);
    } finally {
      await other.close();
      await c.close();
    }
  }, 40_000);

  it('logging/setLevel is sent on to the upstreams that declare logging, names those that do not, and filters what is relayed', async () => {
    const { c, heard } = await client('legacy');
    try {
      await streamOpen(c, heard);
      const r = (await c.setLoggingLevel('warning')) as { _meta?: Record<string, unknown> };
      const said = r._meta?.[LOGGING_META_KEY] as { sent_to: string[]; without_logging: string[]; failed: string[] };
      expect([...said.sent_to].sort()).toEqual(['ev', 'flood', 'off']);
      expect(said.without_logging).toEqual(['mute']);
      expect(said.failed).toEqual([]);
      // the upstream itself was set to it
      expect(textOf(await c.callTool({ name: 'off__level', arguments: {} }))).toBe('warning');
      await log(c, 'off', { level: 'info', data: 'below the level' });
      await log(c, 'off', { level: 'error', data: 'above the level' });
      await until(() => heard.some((m) => m.data === 'above the level'), 10_000, 'the error');
      expect(heard.map((m) => m.data)).toEqual(['above the level']);
    } finally {
      await c.setLoggingLevel('debug');
      await c.close();
    }
  });

  it(`passes on ${MAX_LOGS_PER_WINDOW} messages of one upstream in ${LOG_WINDOW_MS / 1000} s and counts the rest as dropped`, async () => {
    const { c, heard } = await client('legacy');
    try {
      await streamOpen(c, heard);
      const before = (await view('flood')).logs!;
      await log(c, 'flood', { level: 'info', data: 'flood', count: 120 });
      // a message of another upstream after the flood: every flood message relayed was written before it
      await log(c, 'off', { level: 'info', data: 'after the flood' });
      await until(() => heard.some((m) => m.data === 'after the flood'), 10_000, 'the message after the flood');
      expect(heard.filter((m) => m.logger === 'flood')).toHaveLength(MAX_LOGS_PER_WINDOW);
      const after = (await view('flood')).logs!;
      expect(after.forwarded - before.forwarded).toBe(MAX_LOGS_PER_WINDOW);
      expect(after.dropped - before.dropped).toBe(120 - MAX_LOGS_PER_WINDOW);
    } finally {
      await c.close();
    }
  });
});

describe('2025 clients without a GET stream', () => {
  it("hear the upstream's messages on the call's own stream, before its result, at the token's level", async () => {
    const token = (await u.w.svc.createToken({ label: 'no stream', user: 'admin' })).token;
    const call = async (id: number, name: string, args: Record<string, unknown>) => {
      const r = await fetch(u.w.svc.mcpUrl, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params: name === '' ? args : { name, arguments: args } }),
      });
      const text = await r.text();
      // JSON when nothing came before the result, an event stream when something did
      if (r.headers.get('content-type')?.includes('application/json'))
        return [JSON.parse(text) as { method?: string; params?: Record<string, unknown>; id?: number }];
      return text
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice(6)) as { method?: string; params?: Record<string, unknown>; id?: number });
    };
    let method = 'tools/call';
    const events = await call(1, 'off__log', { level: 'info', data: 'on the call stream' });
    expect(events.map((e) => e.method ?? `result ${e.id}`)).toEqual(['notifications/message', 'result 1']);
    expect(events[0]!.params).toEqual({ level: 'info', logger: 'off', data: 'on the call stream' });
    method = 'logging/setLevel';
    await call(2, '', { level: 'error' });
    method = 'tools/call';
    const quiet = await call(3, 'off__log', { level: 'info', data: 'below its level' });
    expect(quiet.map((e) => e.method ?? `result ${e.id}`)).toEqual(['result 3']);
  });
});

describe('2026-07-28 clients: the stream of the call that names a level', () => {
  const LEVEL = 'io.modelcontextprotocol/logLevel';

  it("hears the upstream's messages at the level the call named, before its result", async () => {
    const { c, heard } = await client('modern');
    try {
      const r = await log(c, 'off', { level: 'warning', data: 'during the call', logger: 'job' }, { [LEVEL]: 'info' });
      expect(textOf(r)).toBe('sent 1');
      expect(heard).toEqual([{ level: 'warning', logger: 'off/job', data: 'during the call' }]);
      await log(c, 'off', { level: 'info', data: 'below' }, { [LEVEL]: 'error' });
      await log(c, 'off', { level: 'emergency', data: 'no level named' });
      expect(heard).toHaveLength(1);
    } finally {
      await c.close();
    }
  });

  it('has no logging/setLevel (the revision removed it)', async () => {
    const { c } = await client('modern');
    try {
      await expect(c.setLoggingLevel('debug')).rejects.toThrow();
    } finally {
      await c.close();
    }
  });
});

describe('the relay', () => {
  it('after a window with drops, the next message comes after a notice of how many were dropped; large data is cut', () => {
    let now = 0;
    const sent: LogMessage[] = [];
    const relay = new LogRelay(
      'x',
      (m) => sent.push(m),
      () => now,
    );
    for (let i = 0; i < MAX_LOGS_PER_WINDOW + 3; i++) relay.take({ level: 'info', data: i });
    relay.take({ level: 'verbose', data: 'no such level' });
    expect(sent).toHaveLength(MAX_LOGS_PER_WINDOW);
    expect(relay.snapshot()).toEqual({ forwarded: MAX_LOGS_PER_WINDOW, dropped: 4 });
    now += LOG_WINDOW_MS;
    relay.take({ level: 'debug', data: 'x'.repeat(MAX_LOG_DATA_CHARS + 10) });
    expect(sent[MAX_LOGS_PER_WINDOW]).toMatchObject({ level: 'warning', logger: 'x' });
    expect(String(sent[MAX_LOGS_PER_WINDOW]!.data)).toContain('Gatehouse dropped 4 log messages');
    const cut = String(sent[MAX_LOGS_PER_WINDOW + 1]!.data);
    expect(cut.startsWith('x'.repeat(MAX_LOG_DATA_CHARS))).toBe(true);
    expect(cut).toContain(`[cut by Gatehouse at ${MAX_LOG_DATA_CHARS} of ${MAX_LOG_DATA_CHARS + 10} characters]`);
  });
});
