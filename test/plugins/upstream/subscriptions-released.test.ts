import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { EVERYTHING, REPO, startUpstreamWorld, until, type UpstreamWorld } from './upstream-world.ts';

/**
 * Upstream resource subscriptions let go when nobody can hold them any more; each one held for good would count
 * against the upstream's bound (MAX_SUBSCRIBED, then no client could subscribe to another). server-everything,
 * behind a wrapper that records what the gateway asks of it.
 * - A 2026-07-28 listen stream's resources are subscribed before the SDK's handler checks the request
 *   (main/mcp/endpoint.ts serveListen): a listen the handler refuses never opens its stream, and lets them go.
 * - A 2025 token's resources/subscribe is the token's: revoked, it lets them go (main/mcp/list-changed.ts).
 */
const OWN = 'demo://resource/static/document/architecture.md';
const WRAPPED = `gatehouse-upstream://evr/${OWN}`;
let u: UpstreamWorld;
/** What the gateway asked of the upstream so far, as the wrapper wrote it in the upstream's own HOME. */
let log: string;
const recorded = async () => readFile(log, 'utf8').catch(() => '');

beforeAll(async () => {
  u = await startUpstreamWorld();
  await u.ok('POST', 'upstreams', {
    id: 'evr',
    transport: {
      kind: 'stdio',
      command: process.execPath,
      args: [join(REPO, 'test/fixtures/upstream/recording-stdio.mjs'), process.execPath, EVERYTHING],
    },
  });
  const [row] = (await u.ok('GET', 'upstreams')) as Array<{ confinement: { state: string; private_home: string } }>;
  // Confined (as every machine that runs the suite can: .ci/run installs bubblewrap), it writes only in its own HOME.
  expect(row!.confinement.state).toBe('confined');
  log = join(row!.confinement.private_home, 'asked.log');
  await until(async () => (await recorded()).includes('initialize'), 20_000, 'the upstream to start');
}, 60_000);
afterAll(async () => {
  await u?.stop();
});

it('a listen the SDK refuses after its resources were subscribed leaves no upstream subscription behind', async () => {
  const res = await fetch(u.w.svc.mcpUrl, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${u.token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'subscriptions/listen',
    },
    // the gateway subscribes the string it reads; the SDK's schema refuses the list for its number
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'refused-listen',
      method: 'subscriptions/listen',
      params: {
        notifications: { resourceSubscriptions: [WRAPPED, 5] },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
  const answer = (await res.json()) as { error?: { code: number } };
  expect(answer.error?.code).toBe(-32602);
  expect(await recorded()).toContain(`resources/subscribe ${JSON.stringify(OWN)}`);
  await until(
    async () => (await recorded()).includes(`resources/unsubscribe ${JSON.stringify(OWN)}`),
    10_000,
    'the upstream to be unsubscribed',
  );
}, 30_000);

it("a revoked token's 2025 subscriptions are let go at the upstream", async () => {
  const own = 'demo://resource/static/document/features.md';
  const { token, record } = await u.w.svc.createToken({ label: 'subscriber', user: 'admin' });
  const c = new Client({ name: 'subscriber', version: '1' }, { versionNegotiation: { mode: 'legacy' } });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(u.w.svc.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  try {
    await c.subscribeResource({ uri: `gatehouse-upstream://evr/${own}` });
    expect(await recorded()).toContain(`resources/subscribe ${JSON.stringify(own)}`);
  } finally {
    await c.close();
  }
  // no stream of the token is open: the revocation alone lets its subscription go
  await u.w.svc.revokeToken(record.id);
  await until(
    async () => (await recorded()).includes(`resources/unsubscribe ${JSON.stringify(own)}`),
    10_000,
    "the revoked token's subscription to be let go",
  );
}, 30_000);
