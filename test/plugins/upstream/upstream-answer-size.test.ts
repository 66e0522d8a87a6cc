import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { UpstreamView } from '../../../main/contract/upstreams.ts';
import { MAX_UPSTREAM_MESSAGE_BYTES } from '../../../main/plugins/upstream/stdio-transport.ts';
import { REPO, startUpstreamWorld, textOf, type UpstreamWorld } from './upstream-world.ts';

/**
 * Issue 30, item 9: a 50 MB answer from a healthy stdio upstream. Before,
 * it overflowed the SDK's buffer after about a minute, answered
 * `upstream_unavailable` and restarted the process. Now it is refused at
 * once with what happened, the process keeps running (no restart, same
 * health) and the next call works; an answer under the bound passes.
 */
let u: UpstreamWorld;
let client: Client;
const health = async () => (await u.ok<UpstreamView[]>('GET', 'upstreams')).find((v) => v.id === 'big')!.health;

beforeAll(async () => {
  u = await startUpstreamWorld({ license: null });
  await u.ok('POST', 'upstreams', {
    id: 'big',
    transport: { kind: 'stdio', command: process.execPath, args: [`${REPO}test/fixtures/upstream/storm-upstream.mjs`] },
    read: ['big', 'ping'],
  });
  client = await u.mcp();
}, 120_000);
afterAll(async () => {
  await client?.close();
  await u?.stop();
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
