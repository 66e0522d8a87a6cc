import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { UpstreamView } from '../../../main/contract/upstreams.ts';
import { MAX_UPSTREAM_MESSAGE_BYTES } from '../../../main/plugins/upstream/stdio-transport.ts';
import { REPO, startUpstreamWorld, textOf, type UpstreamWorld } from './upstream-world.ts';
import { startBigServer } from '../../fixtures/upstream/big-http-server.ts';
import { boundedFetch } from '../../../main/plugins/upstream/bounded-fetch.ts';

/**
 * A 50 MB answer from a healthy stdio upstream. Before,
 * it overflowed the SDK's buffer after about a minute, answered
 * `upstream_unavailable` and restarted the process. Now it is refused at
 * once with what happened, the process keeps running (no restart, same
 * health) and the next call works; an answer under the bound passes.
 */
let u: UpstreamWorld;
let client: Client;
let remote: { url: string; stop(): Promise<void> };
const health = async (id = 'big') => (await u.ok<UpstreamView[]>('GET', 'upstreams')).find((v) => v.id === id)!.health;

beforeAll(async () => {
  u = await startUpstreamWorld({ license: null });
  await u.ok('POST', 'upstreams', {
    id: 'big',
    transport: { kind: 'stdio', command: process.execPath, args: [`${REPO}test/fixtures/upstream/storm-upstream.mjs`] },
    read: ['big', 'ping'],
  });
  remote = await startBigServer();
  await u.ok('POST', 'upstreams', { id: 'web', transport: { kind: 'http', url: remote.url }, read: ['big', 'ping'] });
  client = await u.mcp();
}, 120_000);
afterAll(async () => {
  await client?.close();
  await u?.stop();
  await remote?.stop();
});

it('an answer over 16 MiB is refused at once, the upstream is not restarted, and its next call works', async () => {
  const before = await health();
  expect(before.status).toBe('connected');
  const started = Date.now();
  const r = await client.callTool({ name: 'big__big', arguments: { bytes: 50 * 1000 * 1000 } });
  const took = Date.now() - started;
  console.log(`[answer size] a 50 MB answer refused in ${took} ms`);
  expect(r.isError).toBe(true);
  expect(textOf(r)).toMatch(
    /^upstream_error: upstream 'big' answered with more than 16 MiB \(5000\d{4} bytes\), more than an upstream answer may be: the answer was dropped; the upstream keeps running/,
  );
  expect(took).toBeLessThan(20_000);
  const after = await health();
  expect(after).toMatchObject({ status: 'connected', restarts: before.restarts, connected_at: before.connected_at });
  expect(textOf(await client.callTool({ name: 'big__ping', arguments: {} }))).toBe('pong');
  // Under the bound it passes whole.
  const fine = await client.callTool({ name: 'big__big', arguments: { bytes: 4 * 1024 * 1024 } });
  expect(textOf(fine).length).toBe(4 * 1024 * 1024);
  expect(MAX_UPSTREAM_MESSAGE_BYTES).toBe(16 * 1024 * 1024);
}, 120_000);

it('a Streamable HTTP upstream: an answer over 16 MiB is refused at once, the session stays, and its next call works', async () => {
  const before = await health('web');
  expect(before.status).toBe('connected');
  const started = Date.now();
  const r = await client.callTool({ name: 'web__big', arguments: { bytes: 50 * 1000 * 1000 } });
  console.log(`[answer size] a 50 MB HTTP answer refused in ${Date.now() - started} ms`);
  expect(textOf(r)).toMatch(
    /^upstream_error: upstream 'web' answered with more than 16 MiB( \(\d+ bytes\))?, more than an upstream answer may be: the answer was dropped; the upstream keeps running/,
  );
  expect(await health('web')).toMatchObject({ status: 'connected', restarts: before.restarts });
  expect(textOf(await client.callTool({ name: 'web__ping', arguments: {} }))).toBe('pong');
  const fine = await client.callTool({ name: 'web__big', arguments: { bytes: 4 * 1024 * 1024 } });
  expect(textOf(fine).length).toBe(4 * 1024 * 1024);
}, 120_000);

it('the bounded fetch: a JSON answer over the bound becomes the error for its request; an event over it on a stream too, the rest passes whole', async () => {
  const sizes: number[] = [];
  const post = { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: {} }) };
  const json = boundedFetch(
    1000,
    (n) => sizes.push(n),
    async () => new Response('x'.repeat(5000), { status: 200, headers: { 'content-type': 'application/json' } }),
  );
  const a = (await (await json('http://u/mcp', post)).json()) as { id: number; error: { code: number } };
  expect([a.id, a.error.code]).toEqual([9, -32050]);
  const events = `event: message\ndata: {"a":1}\n\nevent: message\ndata: ${'y'.repeat(3000)}\n\nevent: message\r\ndata: {"b":2}\r\n\r\n`;
  const sse = boundedFetch(
    1000,
    (n) => sizes.push(n),
    async () => {
      const bytes = Buffer.from(events);
      // in small pieces, a blank line split across them
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          for (let i = 0; i < bytes.length; i += 7) c.enqueue(bytes.subarray(i, i + 7));
          c.close();
        },
      });
      return new Response(stream, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    },
  );
  const text = await (await sse('http://u/mcp', post)).text();
  const blocks = text.split(/\r?\n\r?\n/).filter((b) => b.trim());
  expect(blocks[0]).toBe('event: message\ndata: {"a":1}');
  expect(JSON.parse(blocks[1]!.split('data: ')[1]!)).toMatchObject({ id: 9, error: { code: -32050 } });
  expect(blocks[2]).toBe('event: message\r\ndata: {"b":2}');
  expect(sizes).toEqual([5000, expect.any(Number)]);
  expect(sizes[1]).toBeGreaterThan(3000);
});
