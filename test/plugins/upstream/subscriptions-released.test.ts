import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectClient, rawPost } from '../../helpers/service.ts';
import { EVERYTHING, REPO, startUpstreamWorld, until, type UpstreamWorld } from './upstream-world.ts';

/**
 * Upstream resource subscriptions let go when nobody can hold them any more; each one held for good would count
 * against the upstream's bound (MAX_SUBSCRIBED, then no client could subscribe to another). server-everything,
 * behind a wrapper that records what the gateway asks of it.
 * - A 2026-07-28 listen stream's resources are subscribed before the SDK's handler checks the request
 *   (main/mcp/endpoint.ts serveListen): they go when the request ends, its stream closed or never opened (a listen
 *   the handler refuses).
 * - A 2025 token's resources/subscribe is the token's: revoked, it lets them go (main/mcp/list-changed.ts).
 */
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

/** Resolves once the upstream was asked `method` for `own` (an upstream URI). */
const asked = (method: string, own: string) =>
  until(
    async () => (await recorded()).split('\n').includes(`${method} ${JSON.stringify(own)}`),
    10_000,
    `${method} of ${own} at the upstream`,
  );
const wrapped = (own: string) => `gatehouse-upstream://evr/${own}`;

it("a listen stream's resources are let go at the upstream when it closes", async () => {
  const own = 'demo://resource/static/document/startup.md';
  const c = await connectClient(u.w.svc.mcpUrl, u.token, 'modern');
  try {
    const sub = await c.listen({ resourceSubscriptions: [wrapped(own)] });
    await asked('resources/subscribe', own);
    await sub.close();
    await asked('resources/unsubscribe', own);
  } finally {
    await c.close();
  }
}, 30_000);

it('a listen the SDK refuses after its resources were subscribed leaves no upstream subscription behind', async () => {
  const own = 'demo://resource/static/document/architecture.md';
  const res = await rawPost(
    u.w.svc.mcpUrl,
    {
      jsonrpc: '2.0',
      id: 'refused-listen',
      method: 'subscriptions/listen',
      // the gateway subscribes the string it reads; the SDK's schema refuses the list for its number
      params: {
        notifications: { resourceSubscriptions: [wrapped(own), 5] },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    },
    {
      Authorization: `Bearer ${u.token}`,
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'subscriptions/listen',
    },
  );
  expect(((await res.json()) as { error?: { code: number } }).error?.code).toBe(-32602);
  await asked('resources/subscribe', own);
  await asked('resources/unsubscribe', own);
}, 30_000);

it("a revoked token's 2025 subscriptions are let go at the upstream", async () => {
  const own = 'demo://resource/static/document/features.md';
  const { token, record } = await u.w.svc.createToken({ label: 'subscriber', user: 'admin' });
  const c = await connectClient(u.w.svc.mcpUrl, token, 'legacy');
  try {
    await c.subscribeResource({ uri: wrapped(own) });
    await asked('resources/subscribe', own);
  } finally {
    await c.close();
  }
  // no stream of the token is open: the revocation alone lets its subscription go
  await u.w.svc.revokeToken(record.id);
  await asked('resources/unsubscribe', own);
}, 30_000);
