import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { UpstreamView } from '../../../main/contract/upstreams.ts';
import { startGateway, type Gateway } from '../../cloud-client/helpers/world.ts';
import { cliJson, collect, dirArgs, runCliHere, spawnCli, startServe, type Served } from '../../cli/cli-harness.ts';
import { freePort, startEverythingHttp } from './everything-http.ts';
import { textOf, until } from './upstream-world.ts';

/**
 * Faults: an HTTP upstream that is down when the whole service
 * starts. A fresh `gatehouse serve` process with server-everything configured
 * but not listening: health down, its pinned tools listed but answering
 * upstream_unavailable at once. Then the upstream comes up: without a restart
 * of the service it reconnects, health turns connected, its prompts and
 * resources appear with list_changed, and a call works.
 */
let gw: Gateway;
let dir: string;
let served: Served | null = null;
let everything: { stop(): Promise<void> } | null = null;

beforeAll(async () => {
  gw = await startGateway();
  dir = await mkdtemp(join(tmpdir(), 'gh-updown-'));
}, 120_000);
afterAll(async () => {
  await served?.stop('SIGKILL');
  await everything?.stop();
  await gw?.stop();
  await rm(dir, { recursive: true, force: true });
});

// Asked in this process (cli-harness.ts, runCliHere), through the running service's admin API: polled every 50 ms.
const health = async () =>
  (await cliJson<UpstreamView[]>(dir, ['upstreams', 'list'], {}, runCliHere)).find((v) => v.id === 'evh')!.health;
// The reconnect backoff capped at 1 s (serve-command.ts; normally it doubles from 0.5 s up to 30 s): the test
// waits for the reconnect, not for the backoff to come round.
const BACKOFF = { GATEHOUSE_TEST_UPSTREAM_BACKOFF_MS: '1000' };

it('an HTTP upstream down at start comes back without a restart of the service: down -> connected, list_changed, a call works', async () => {
  const port = await freePort();
  everything = await startEverythingHttp(port);
  served = await startServe(dir);
  await cliJson(dir, ['cloud', 'connect', '--url', gw.url], {}, runCliHere);
  const activate = spawnCli(['cloud', 'activate', '-', ...dirArgs(dir), '--json']);
  activate.stdin.end(`${(await gw.license('pro')).license_key}\n`);
  expect((await collect(activate)).code).toBe(0);
  await cliJson(dir, ['upstreams', 'add', 'evh', '--url', `http://127.0.0.1:${port}/mcp`], {}, runCliHere);
  const { token } = await cliJson<{ token: string }>(
    dir,
    ['tokens', 'create', '--label', 'agent', '--user', 'admin'],
    {},
    runCliHere,
  );
  await served.stop('SIGTERM');
  await everything.stop();
  everything = null;

  // A fresh service process; the upstream is configured but nothing listens on its port.
  served = await startServe(dir, [], BACKOFF);
  await until(async () => (await health()).status === 'down', 15_000, 'health down');
  expect((await health()).last_error).toBeTruthy();
  const heard: string[] = [];
  const client = new Client(
    { name: 'down-at-start', version: '1.0.0' },
    {
      versionNegotiation: { mode: 'legacy' },
      listChanged: {
        prompts: {
          debounceMs: 0,
          onChanged: (e, items) => void (!e && items?.some((p) => p.name.startsWith('evh__')) && heard.push('prompts')),
        },
        resources: {
          debounceMs: 0,
          onChanged: (e, items) =>
            void (!e && items?.some((r) => r.uri.startsWith('gatehouse-upstream://evh/')) && heard.push('resources')),
        },
      },
    },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(served.info.mcp_url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  try {
    // The pinned tools stay listed while it is down (docs/upstreams.md); a call answers at once without sending anything.
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('evh__echo');
    expect(textOf(await client.callTool({ name: 'evh__echo', arguments: { message: 'early' } }))).toMatch(
      /^upstream_unavailable: upstream 'evh' is down/,
    );
    expect((await client.listPrompts()).prompts.filter((p) => p.name.startsWith('evh__'))).toEqual([]);

    everything = await startEverythingHttp(port);
    await until(
      async () => (await health()).status === 'connected',
      30_000,
      'health connected (reconnected by its backoff)',
    );
    await until(
      () => heard.includes('prompts') && heard.includes('resources'),
      15_000,
      'prompts and resources list_changed',
    );
    const r = await client.callTool({ name: 'evh__echo', arguments: { message: 'back again' } });
    expect(textOf(r)).toBe('Echo: back again');
  } finally {
    await client.close();
  }
}, 180_000);
