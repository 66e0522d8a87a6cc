import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING, startUpstreamWorld, type UpstreamWorld } from './upstream-world.ts';

/**
 * server-everything listed directly and through Gatehouse, both eras, by clients that declare the same (nothing):
 * every field of every tool, prompt, resource and resource template is the same once the differences
 * docs/upstreams.md lists ("What passes through, and what Gatehouse changes") are undone, and only those:
 * the `<id>__` prefix, the `gatehouse-upstream://<id>/` wrap, Gatehouse's own `_meta` keys beside the upstream's,
 * a write's output schema (its answer is the staging receipt), and, to a 2026-07-28 client, `execution` and the
 * revision's own server info on each result.
 */
const ID = 'ev';
const PREFIX = `${ID}__`;
const WRAP = `gatehouse-upstream://${ID}/`;
let u: UpstreamWorld;
let direct: Client;
type Obj = Record<string, unknown>;

beforeAll(async () => {
  u = await startUpstreamWorld();
  await u.ok('POST', 'upstreams', {
    id: ID,
    transport: { kind: 'stdio', command: process.execPath, args: [EVERYTHING] },
  });
  direct = new Client({ name: 'compare', version: '1' });
  await direct.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING], stderr: 'ignore' }));
}, 120_000);
afterAll(async () => {
  await direct?.close();
  await u?.stop();
});

async function through(era: 'legacy' | 'modern'): Promise<Client> {
  const c = new Client(
    { name: 'compare', version: '1' },
    { versionNegotiation: { mode: era === 'legacy' ? 'legacy' : { pin: '2026-07-28' } } },
  );
  await c.connect(
    new StreamableHTTPClientTransport(new URL(u.w.svc.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${u.token}` } },
    }),
  );
  return c;
}

/**
 * Gatehouse's own `_meta` keys taken out, and the 2026-07-28 revision's own (`io.modelcontextprotocol/serverInfo` on
 * every result, which names the server the client talks to); an `_meta` left empty goes with them.
 */
function withoutOwnMeta<T extends Obj>(x: T): T {
  const meta = x._meta as Obj | undefined;
  if (!meta) return x;
  const kept = Object.fromEntries(
    Object.entries(meta).filter(([k]) => !k.startsWith('gatehouse/') && k !== 'io.modelcontextprotocol/serverInfo'),
  );
  const { _meta: _, ...rest } = x;
  return (Object.keys(kept).length ? { ...rest, _meta: kept } : rest) as unknown as T;
}
const byKey =
  <T extends Obj>(k: string) =>
  (a: T, b: T) =>
    String(a[k]).localeCompare(String(b[k]));

describe.each(['legacy', 'modern'] as const)('server-everything directly and through Gatehouse (%s client)', (era) => {
  it('lists every tool with every field as sent, the documented differences undone', async () => {
    const c = await through(era);
    const mine = (await c.listTools()).tools as Obj[];
    const theirs = ((await direct.listTools()).tools as Obj[]).sort(byKey('name'));
    const staged = new Set(
      (await u.ok<{ tool_list: Array<{ tool: string; class: string }> }>('GET', `upstreams/${ID}`)).tool_list
        .filter((t) => t.class === 'write')
        .map((t) => t.tool),
    );
    const undone = mine
      .filter((t) => String(t.name).startsWith(PREFIX))
      .map((t) => withoutOwnMeta({ ...t, name: String(t.name).slice(PREFIX.length) }))
      .sort(byKey('name'));
    const expected = theirs.map((t) => {
      let out: Obj = { ...t };
      if (staged.has(String(t.name))) {
        const { outputSchema: _, ...rest } = out;
        out = rest;
      }
      if (era === 'modern') {
        const { execution: _, ...rest } = out;
        out = rest;
      }
      return out;
    });
    expect(undone).toEqual(expected);
    await c.close();
  });

  it('lists every prompt, resource and resource template with every field as sent, names and URIs undone', async () => {
    const c = await through(era);
    const prompts = ((await c.listPrompts()).prompts as Obj[])
      .filter((p) => String(p.name).startsWith(PREFIX))
      .map((p) => withoutOwnMeta({ ...p, name: String(p.name).slice(PREFIX.length) }))
      .sort(byKey('name'));
    expect(prompts).toEqual(((await direct.listPrompts()).prompts as Obj[]).sort(byKey('name')));
    const resources = ((await c.listResources()).resources as Obj[])
      .filter((r) => String(r.uri).startsWith(WRAP))
      .map((r) => withoutOwnMeta({ ...r, uri: String(r.uri).slice(WRAP.length) }))
      .sort(byKey('uri'));
    expect(resources).toEqual(((await direct.listResources()).resources as Obj[]).sort(byKey('uri')));
    const templates = ((await c.listResourceTemplates()).resourceTemplates as Obj[])
      .filter((r) => String(r.uriTemplate).startsWith(WRAP))
      .map((r) => withoutOwnMeta({ ...r, uriTemplate: String(r.uriTemplate).slice(WRAP.length) }))
      .sort(byKey('uriTemplate'));
    expect(templates).toEqual(
      ((await direct.listResourceTemplates()).resourceTemplates as Obj[]).sort(byKey('uriTemplate')),
    );
    await c.close();
  });

  it('answers a read call and a resource read as the server does', async () => {
    const c = await through(era);
    expect(
      withoutOwnMeta((await c.callTool({ name: `${PREFIX}echo`, arguments: { message: 'same' } })) as Obj),
    ).toEqual(await direct.callTool({ name: 'echo', arguments: { message: 'same' } }));
    const uri = 'demo://resource/static/document/features.md';
    const mine = (await c.readResource({ uri: `${WRAP}${uri}` })).contents.map((x) => ({ ...x, uri }));
    expect(mine).toEqual((await direct.readResource({ uri })).contents);
    await c.close();
  });
});
