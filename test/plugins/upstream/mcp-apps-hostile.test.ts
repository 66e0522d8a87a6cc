import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamDetail } from '../../../main/contract/upstreams.ts';
import { REPO, startUpstreamWorld, until, type UpstreamWorld } from './upstream-world.ts';

/**
 * A hostile MCP App server (test/fixtures/upstream/view-upstream.mjs with
 * HOSTILE=1) behind the real service: views that try to leave their
 * namespace, views of 6 MB and 50 MB and one that asks for every permission. Each has
 * the answer docs/upstreams.md ("MCP Apps") gives.
 */
const VIEW_UPSTREAM = `${REPO}test/fixtures/upstream/view-upstream.mjs`;
const MIME = 'text/html;profile=mcp-app';
type Listed = { name: string; _meta?: { ui?: { resourceUri?: string }; 'ui/resourceUri'?: string } };

let u: UpstreamWorld;
let c: Client;
let added: UpstreamDetail;
let addMs: number;

beforeAll(async () => {
  u = await startUpstreamWorld();
  const started = Date.now();
  added = await u.ok<UpstreamDetail>('POST', 'upstreams', {
    id: 'hostile',
    transport: {
      kind: 'stdio',
      command: process.execPath,
      args: [VIEW_UPSTREAM],
      env: [
        { name: 'HOSTILE', value: '1' },
        { name: 'CONTROL_FILE', value: '/nonexistent/control.json' },
      ],
    },
  });
  addMs = Date.now() - started;
  // reading the 50 MB view at add ended the connection: it is back once restarted (its backoff)
  await until(async () => (await u.ok<UpstreamDetail>('GET', 'upstreams/hostile')).health.status === 'connected');
  c = new Client(
    { name: 'apps-host', version: '1.0.0' },
    { capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: [MIME] } } } },
  );
  await c.connect(
    new StreamableHTTPClientTransport(new URL(u.w.svc.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${u.token}` } },
    }),
  );
}, 180_000);
afterAll(async () => {
  await c?.close().catch(() => undefined);
  await u?.stop();
});

const listed = async (name: string) =>
  ((await c.listTools()).tools as Listed[]).find((t) => t.name === `hostile__${name}`);
const problems = async () => (await u.ok<UpstreamDetail>('GET', 'upstreams/hostile')).problems;

describe('a view URI that tries to leave its namespace', () => {
  it.each([
    ['escape-dots', 'ui://board/../../other/x.html', 'a view URI may not hold . or .. segments'],
    ['escape-encoded', 'ui://board/%2e%2e/x.html', 'a view URI may not hold backslashes or encoded dots and slashes'],
    ['escape-scheme', 'https://evil.example/x.html', 'a view URI starts with ui://'],
  ])('%s: the tool is offered without naming it, and the problem is reported', async (tool, uri, why) => {
    const t = await listed(tool);
    expect(t).toBeDefined();
    expect(t!._meta?.ui?.resourceUri).toBeUndefined();
    expect(t!._meta?.['ui/resourceUri']).toBeUndefined();
    expect(await problems()).toContain(`hostile__${tool}: its view ${uri} is not named to clients: ${why}`);
    expect(added.view_list!.some((v) => v.view === uri)).toBe(false);
  });

  it("a view named after another upstream stays in this upstream's namespace", async () => {
    expect((await listed('other-upstream'))!._meta?.ui?.resourceUri).toBe('ui://hostile/other/x.html');
    expect(((await c.readResource({ uri: 'ui://hostile/other/x.html' })).contents[0] as { text: string }).text).toBe(
      '<p>named after another</p>',
    );
    // the upstream's own URI is nobody's: no upstream `other` offers it
    await expect(c.readResource({ uri: 'ui://other/x.html' })).rejects.toThrow(/not found/i);
    // a client normalizing dot segments itself cannot reach past the id either
    await expect(c.readResource({ uri: 'ui://hostile/board/../../other/x.html' })).rejects.toThrow(/not found/i);
  });
});

describe('views too large', () => {
  it('a 6 MB view is not pinned, named or served: the 4 MiB bound is reported', async () => {
    expect(added.view_list!.some((v) => v.view === 'ui://board/large.html')).toBe(false);
    expect((await listed('large'))!._meta?.ui?.resourceUri).toBeUndefined();
    expect(await problems()).toContain(
      'view ui://board/large.html: not offered: the view is 6.0 MiB, more than the 4 MiB a view may be',
    );
    await expect(c.readResource({ uri: 'ui://hostile/board/large.html' })).rejects.toThrow(/not found/i);
  });

  it('a 50 MB view is refused as an answer over 16 MiB, the upstream keeps running: it is not read again, and the upstream works', async () => {
    expect(added.view_list!.some((v) => v.view === 'ui://board/huge.html')).toBe(false);
    expect((await listed('huge'))!._meta?.ui?.resourceUri).toBeUndefined();
    await until(async () => (await u.ok<UpstreamDetail>('GET', 'upstreams/hostile')).health.status === 'connected');
    const d = await u.ok<UpstreamDetail>('GET', 'upstreams/hostile');
    expect(d.problems).toContain(
      'view ui://board/huge.html: not offered: its answer was over the 16 MiB an upstream answer may be (refused, the upstream kept running): it is not read again while the service runs',
    );
    // refused as an answer (stdio-transport.ts), not by ending the connection: no restart
    const restarts = d.health.restarts;
    expect(restarts).toBe(0);
    // a re-listing does not read it again (no restart), and its tools answer
    await u.ok('POST', 'upstreams/hostile/test');
    const r = (await c.callTool({ name: 'hostile__huge', arguments: {} })) as { content: Array<{ text?: string }> };
    expect(r.content[0]?.text).toBe('huge');
    expect((await u.ok<UpstreamDetail>('GET', 'upstreams/hostile')).health.restarts).toBe(restarts);
    await expect(c.readResource({ uri: 'ui://hostile/board/huge.html' })).rejects.toThrow(/not found/i);
    console.log(`add with a 6 MB and a 50 MB view: ${addMs} ms`);
  });
});

describe('a view that asks for every permission', () => {
  it('the consent step shows each ask; it is served with them as pinned', async () => {
    const v = added.view_list!.find((x) => x.view === 'ui://board/greedy.html')!;
    expect(v.asks).toEqual([
      'connectDomains: https://* wss://*',
      'resourceDomains: https://*',
      'frameDomains: https://*',
      'baseUriDomains: https://*',
      'permissions: camera, microphone, geolocation, clipboardWrite',
      'domain: greedy.example',
    ]);
    const r = (await c.readResource({ uri: 'ui://hostile/board/greedy.html' })).contents[0] as {
      _meta?: { ui?: { permissions?: Record<string, unknown> } };
    };
    expect(Object.keys(r._meta?.ui?.permissions ?? {})).toEqual([
      'camera',
      'microphone',
      'geolocation',
      'clipboardWrite',
    ]);
  });
});
