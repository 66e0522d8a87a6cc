import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import type { UpstreamDetail, UpstreamToolView } from '../../../main/contract/upstreams.ts';
import { startAuthProxy } from '../../helpers/auth-proxy.ts';
import { freePort, startEverythingHttp } from './everything-http.ts';
import { REPO, TEST_UPSTREAM, startUpstreamWorld, textOf, type UpstreamWorld } from './upstream-world.ts';

/**
 * Names every JavaScript object has (constructor, __proto__, toString,
 * valueOf, hasOwnProperty) as an upstream id, as an upstream's tool names
 * and schema properties, as `--env` names and as `--header` names: refused
 * with a clear error where Gatehouse names things, passed through intact
 * where the upstream or the person does, and nothing else disturbed.
 */
const ODD = ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty'];
const ODD_UPSTREAM = `${REPO}test/fixtures/upstream/odd-names-upstream.mjs`;
let u: UpstreamWorld;
let client: Client;
const PROTOTYPE_BEFORE = Object.getOwnPropertyNames(Object.prototype).sort();

/** What to stop at the end, last started first. */
const started: Array<{ stop(): Promise<unknown> }> = [];

beforeAll(async () => {
  u = await startUpstreamWorld();
  started.push(u);
  client = await u.mcp();
  started.push({ stop: () => client.close() });
}, 120_000);
afterAll(async () => {
  for (const s of started.reverse()) await s.stop();
});

describe('names every object has', () => {
  it('as an upstream id: refused with a clear message, nothing stored', async () => {
    for (const id of ODD) {
      const r = await u.w.admin<unknown>('POST', 'upstreams', {
        id,
        transport: { kind: 'stdio', command: process.execPath, args: [TEST_UPSTREAM] },
      });
      expect(r.status, id).toBe(400);
      expect(JSON.stringify(r.body), id).toMatch(
        id === 'constructor'
          ? /is a name every JavaScript object has and cannot be an upstream id/
          : /an upstream id is 1-32 of a-z 0-9/,
      );
    }
    expect(await u.ok<unknown[]>('GET', 'upstreams')).toEqual([]);
    // an id that is not configured answers not_found, whatever it is
    expect((await u.w.admin('GET', 'upstreams/constructor')).body).toMatchObject({ ok: false, code: 'not_found' });
  });

  it("as an upstream's tool names (and schema properties): offered namespaced, called, reviewed, pinned like any other", async () => {
    const d = await u.ok<UpstreamDetail>('POST', 'upstreams', {
      id: 'odd',
      transport: { kind: 'stdio', command: process.execPath, args: [ODD_UPSTREAM] },
    });
    expect(d.tool_list.map((t) => t.tool).sort()).toEqual([...ODD].sort());
    expect(d.problems).toEqual([]);
    const listed = (await client.listTools()).tools.map((t) => t.name);
    for (const n of ODD) expect(listed).toContain(`odd__${n}`);
    // A property named __proto__ does not survive the MCP SDK's own parsing (its zod records drop the key on every hop,
    // Gatehouse's client of the upstream first); it is dropped, never made a prototype. `constructor` passes.
    const schema = (await client.listTools()).tools.find((t) => t.name === 'odd__constructor')!.inputSchema as {
      properties: Record<string, unknown>;
    };
    expect(Object.keys(schema.properties)).toEqual(['constructor']);
    for (const n of ODD) {
      const r = await client.callTool({
        name: `odd__${n}`,
        arguments: JSON.parse('{"__proto__":"p","constructor":"c"}') as Record<string, unknown>,
      });
      expect(textOf(r), n).toBe(`called ${n} with {"constructor":"c"}`);
    }
    const reviewed = await u.ok<UpstreamToolView[]>('POST', 'upstreams/odd/review', {
      hide: ['__proto__'],
      read: ['toString'],
    });
    expect(reviewed.find((t) => t.tool === '__proto__')!.state).toBe('hidden');
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('odd____proto__');
    // The service runs in this process: nothing was added to every object's prototype on the way.
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PROTOTYPE_BEFORE);
  });

  it('as --env names: each reaches the process as a variable of that name', async () => {
    await u.ok('POST', 'upstreams', {
      id: 'envs',
      transport: {
        kind: 'stdio',
        command: process.execPath,
        args: [TEST_UPSTREAM],
        env: ODD.map((name) => ({ name, value: `v-${name}` })),
      },
      read: ['env'],
    });
    const names = textOf(await client.callTool({ name: 'envs__env', arguments: {} })).split(',');
    for (const n of ODD) expect(names).toContain(n);
    expect((await u.ok<UpstreamDetail>('GET', 'upstreams/envs')).env_names).toEqual(ODD);
  });

  it("as --header names: constructor and toString are sent to the HTTP upstream; __proto__ (Node's fetch drops it) is refused, not lost", async () => {
    const port = await freePort();
    started.push(await startEverythingHttp(port));
    const heard: string[] = [];
    const proxy = await startAuthProxy(`http://127.0.0.1:${port}/mcp`, 'unused-by-server-everything', (raw) =>
      heard.push(...raw.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase())),
    );
    started.push({ stop: () => proxy.close() });
    const refused = await u.w.admin('POST', 'upstreams', {
      id: 'hdrs',
      transport: { kind: 'http', url: proxy.url, headers: [{ name: '__proto__', value: 'x' }] },
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("a header named '__proto__' cannot be sent");
    const headers = ['constructor', 'toString', 'valueOf', 'hasOwnProperty'].map((name) => ({
      name,
      value: `h-${name}`,
    }));
    const d = await u.ok<UpstreamDetail>('POST', 'upstreams', {
      id: 'hdrs',
      transport: { kind: 'http', url: proxy.url, headers },
    });
    expect(d.health.status).toBe('connected');
    for (const h of headers) expect(heard).toContain(h.name.toLowerCase());
    expect(textOf(await client.callTool({ name: 'hdrs__echo', arguments: { message: 'through' } }))).toBe(
      'Echo: through',
    );
  });
});
