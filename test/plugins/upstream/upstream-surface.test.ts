import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startEverythingHttp } from './everything-http.ts';
import {
  consentTo,
  EVERYTHING,
  TEST_UPSTREAM,
  startUpstreamWorld,
  until,
  type UpstreamWorld,
} from './upstream-world.ts';
import { rawPost } from '../../helpers/service.ts';

/**
 * Prompts and resources of upstreams: the real server-everything
 * over stdio and over Streamable HTTP behind the real service, read with the
 * real SDK client: namespaced prompts, wrapped resource URIs and templates,
 * list_changed passed on, narrowing by role, token scope and profile, audit.
 */
let u: UpstreamWorld;
let http: { stop(): Promise<void> };
const clients: Client[] = [];
const DOC = 'demo://resource/static/document/features.md';

let dir: string;

/** The real SDK client, 2025 era, hearing resources and prompts list_changed (the URIs and names it then lists). */
async function connect(token: string, heard: string[] = [], era: 'legacy' | 'modern' = 'legacy'): Promise<Client> {
  const c = new Client(
    { name: 'surface-test', version: '1.0.0' },
    {
      versionNegotiation: { mode: era === 'legacy' ? 'legacy' : { pin: '2026-07-28' } },
      listChanged: {
        resources: {
          debounceMs: 0,
          onChanged: (e, items) => void (!e && items && heard.push(...items.map((r) => r.uri))),
        },
        prompts: {
          debounceMs: 0,
          onChanged: (e, items) => void (!e && items && heard.push(...items.map((p) => p.name))),
        },
      },
    },
  );
  await c.connect(
    new StreamableHTTPClientTransport(new URL(u.w.svc.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(c);
  return c;
}
const textOfRead = (r: { contents: Array<{ uri: string; text?: unknown }> }) =>
  r.contents.map((c) => String(c.text ?? '')).join('');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-surface-'));
  const port = await freePort();
  http = await startEverythingHttp(port);
  u = await startUpstreamWorld();
  await u.ok('POST', 'upstreams', {
    id: 'evs',
    transport: { kind: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] },
    read: ['gzip-file-as-resource'],
  });
  await u.ok('POST', 'upstreams', { id: 'evh', transport: { kind: 'http', url: `http://127.0.0.1:${port}/mcp` } });
  await u.ok('POST', 'profiles', { name: 'evs-only', upstreams: ['evs'] });
  await u.ok('POST', 'profiles', { name: 'evs-echo', tools: ['evs__echo'] });
}, 120_000);
// Each test's clients end with it: a token holds at most 4 notification streams (the oldest ends past that), and
// clients left open by earlier tests, reconnecting their streams, could end a later test's stream just before the
// list_changed it waits for (seen: "timed out waiting for prompts/list_changed").
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
});
afterAll(async () => {
  await u?.stop();
  await http?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe.each(['evs', 'evh'])('server-everything (%s) through Gatehouse', (id) => {
  it('lists its prompts as <id>__<name> and gets one with arguments', async () => {
    const c = await connect(u.token);
    const prompts = (await until(
      async () => {
        const { prompts: p } = await c.listPrompts();
        return p.some((x) => x.name === `${id}__args-prompt`) ? p : null;
      },
      10_000,
      'the prompts',
    ))!;
    expect(prompts.map((p) => p.name)).toEqual(
      expect.arrayContaining([`${id}__simple-prompt`, `${id}__args-prompt`, `${id}__resource-prompt`]),
    );
    expect(prompts.find((p) => p.name === `${id}__args-prompt`)!.arguments).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'city', required: true })]),
    );
    const got = await c.getPrompt({ name: `${id}__args-prompt`, arguments: { city: 'Trondheim' } });
    expect(JSON.stringify(got.messages)).toContain('Trondheim');
    // An embedded resource names the URI a client reads it back by, through Gatehouse.
    const embedded = await c.getPrompt({
      name: `${id}__resource-prompt`,
      arguments: { resourceType: 'Text', resourceId: '3' },
    });
    const block = embedded.messages.map((m) => m.content).find((b) => b.type === 'resource') as {
      resource: { uri: string };
    };
    expect(block.resource.uri).toBe(`gatehouse-upstream://${id}/demo://resource/dynamic/text/3`);
    await expect(c.getPrompt({ name: `${id}__no-such-prompt` })).rejects.toThrow(/prompt not found/);
  });

  it('lists resources and templates under gatehouse-upstream://<id>/ and reads them (templates expanded), audited with the upstream as source', async () => {
    const c = await connect(u.token);
    const { resources } = await c.listResources();
    const wrapped = `gatehouse-upstream://${id}/${DOC}`;
    expect(resources.map((r) => r.uri)).toContain(wrapped);
    expect(resources.map((r) => r.uri)).toContain('gatehouse://manual');
    const { resourceTemplates } = await c.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain(
      `gatehouse-upstream://${id}/demo://resource/dynamic/text/{resourceId}`,
    );
    const doc = await c.readResource({ uri: wrapped });
    expect(doc.contents[0]!.uri).toBe(wrapped);
    expect(textOfRead(doc as never)).toMatch(/Prompts/);
    const expanded = await c.readResource({ uri: `gatehouse-upstream://${id}/demo://resource/dynamic/text/7` });
    expect(expanded.contents[0]!.uri).toBe(`gatehouse-upstream://${id}/demo://resource/dynamic/text/7`);
    expect(textOfRead(expanded as never)).toMatch(/7/);
    const audit = await u.ok<{
      entries: Array<{ tool: string; target: string; result: string; source_plugin: string }>;
    }>('GET', 'audit?tool=resources/read');
    expect(audit.entries.find((e) => e.target === wrapped)).toMatchObject({ result: 'ok', source_plugin: id });
    const prompts = await u.ok<{ entries: Array<{ target: string; source_plugin: string; result: string }> }>(
      'GET',
      'audit?tool=prompts/get',
    );
    expect(prompts.entries.find((e) => e.target === `${id}__args-prompt`)).toMatchObject({
      result: 'ok',
      source_plugin: id,
    });
  });
});

describe('resources in tool results', () => {
  type Block = { type: string; uri?: string; resource?: { uri: string } };
  const WRAPPED = /^gatehouse-upstream:\/\/evs\/demo:\/\/resource\//;

  it('resource links a tool returns are wrapped, and each reads back through Gatehouse', async () => {
    const c = await connect(u.token);
    const r = (await c.callTool({ name: 'evs__get-resource-links', arguments: { count: 2 } })) as { content: Block[] };
    const links = r.content.filter((b) => b.type === 'resource_link');
    expect(links).toHaveLength(2);
    for (const link of links) {
      expect(link.uri).toMatch(WRAPPED);
      const read = await c.readResource({ uri: link.uri! });
      expect(read.contents[0]).toMatchObject({ uri: link.uri });
    }
  });

  it("an embedded resource in a staged write's stored result is wrapped too, and reads back", async () => {
    await u.ok('POST', 'upstreams/evs/review', { write: ['get-resource-reference'] });
    const c = await connect(u.token);
    const staged = (await c.callTool({
      name: 'evs__get-resource-reference',
      arguments: { resourceType: 'Text', resourceId: 2 },
    })) as { structuredContent: { status: string; staged_id: string } };
    expect(staged.structuredContent.status).toBe('pending_approval');
    await u.ok('POST', `staged/${staged.structuredContent.staged_id}/confirm`);
    const status = JSON.stringify(
      await c.callTool({ name: 'staged_writes_status', arguments: { staged_id: staged.structuredContent.staged_id } }),
    );
    const uri = 'gatehouse-upstream://evs/demo://resource/dynamic/text/2';
    expect(status).toContain(uri);
    expect(status).not.toMatch(/"uri":"demo:/);
    expect(textOfRead((await c.readResource({ uri })) as never)).toContain('Resource 2');
  });
});

describe('list_changed and narrowing', () => {
  it("an upstream's resources/list_changed reaches the client with the new resource wrapped", async () => {
    const heard: string[] = [];
    const c = await connect(u.token, heard);
    const r = await c.callTool({
      name: 'evs__gzip-file-as-resource',
      arguments: { name: 'made-now.txt.gz', data: 'data:text/plain;base64,aGVsbG8=' },
    });
    expect(r.isError).toBeFalsy();
    const made = 'gatehouse-upstream://evs/demo://resource/session/made-now.txt.gz';
    await until(() => heard.includes(made), 10_000, 'resources/list_changed with the session resource');
    const read = await c.readResource({ uri: made });
    expect(read.contents[0]).toMatchObject({ uri: made, mimeType: 'application/gzip' });
  });

  it("an upstream's prompts/list_changed reaches clients of both eras, and the new prompt answers once approved", async () => {
    const control = join(dir, 'control.json');
    await writeFile(control, '{}');
    await u.ok('POST', 'upstreams', {
      id: 'tp',
      transport: {
        kind: 'stdio',
        command: process.execPath,
        args: [TEST_UPSTREAM],
        env: [{ name: 'CONTROL_FILE', value: control }],
        sandbox: { read: [dir] },
      },
    });
    const heard: string[] = [];
    const modern: string[] = [];
    const c = await connect(u.token, heard);
    const m = await connect(u.token, modern, 'modern');
    expect((await c.listPrompts()).prompts.map((p) => p.name)).toContain('tp__hello');
    expect((await m.listPrompts()).prompts.map((p) => p.name)).toContain('tp__hello');
    await writeFile(control, JSON.stringify({ prompt: 'made-later' }));
    // A new prompt is pinned like a new tool: offered once a person approves it (prompt-pins.test.ts goes further).
    await until(
      async () =>
        (await u.ok<Array<{ prompt: string; state: string }>>('GET', 'upstreams/tp/prompts')).some(
          (p) => p.prompt === 'made-later' && p.state === 'quarantined',
        ),
      10_000,
      'the new prompt quarantined',
    );
    await u.ok('POST', 'upstreams/tp/review', await consentTo(u, 'tp', { prompts: ['made-later'] }));
    await until(() => heard.includes('tp__made-later'), 10_000, 'prompts/list_changed with the new prompt');
    await until(
      () => modern.includes('tp__made-later'),
      10_000,
      'prompts list_changed on a 2026-07-28 subscriptions/listen stream',
    );
    expect(JSON.stringify((await c.getPrompt({ name: 'tp__made-later' })).messages)).toContain('prompt made-later');
  });

  it('follows the rule of resources tied to no tool: role, token scope and profile narrow prompts and resources', async () => {
    const see = async (token: string) => {
      const c = await connect(token);
      return {
        prompts: (await c.listPrompts()).prompts.map((p) => p.name),
        resources: (await c.listResources()).resources.map((r) => r.uri),
        c,
      };
    };
    await u.w.svc.dispatch('users.add', { login: 'writer', role: 'author' });
    const author = await see((await u.w.svc.createToken({ label: 'author', user: 'writer' })).token);
    expect(author.prompts).toEqual([]);
    expect(author.resources.some((r) => r.startsWith('gatehouse-upstream://'))).toBe(false);
    await expect(author.c.readResource({ uri: `gatehouse-upstream://evs/${DOC}` })).rejects.toThrow(
      /resource not found/,
    );
    await expect(author.c.getPrompt({ name: 'evs__simple-prompt' })).rejects.toThrow(/prompt not found/);

    const site = await see(
      (await u.w.svc.createToken({ label: 'site only', user: 'admin', scope: { plugins: ['site', 'evh'] } })).token,
    );
    expect(site.prompts.every((p) => p.startsWith('evh__'))).toBe(true);
    expect(site.prompts.length).toBeGreaterThan(0);
    await expect(site.c.readResource({ uri: `gatehouse-upstream://evs/${DOC}` })).rejects.toThrow(/resource not found/);

    const profiled = await see(
      (await u.w.svc.createToken({ label: 'evs profile', user: 'admin', scope: { profile: 'evs-only' } })).token,
    );
    expect(profiled.prompts.length).toBeGreaterThan(0);
    expect(profiled.prompts.every((p) => p.startsWith('evs__'))).toBe(true);
    expect(profiled.resources).toContain(`gatehouse-upstream://evs/${DOC}`);
    expect(profiled.resources.some((r) => r.startsWith('gatehouse-upstream://evh/'))).toBe(false);

    const toolsOnly = await see(
      (await u.w.svc.createToken({ label: 'echo profile', user: 'admin', scope: { profile: 'evs-echo' } })).token,
    );
    expect(toolsOnly.prompts).toEqual([]);
    const denied = await u.ok<{ entries: Array<{ result: string; error_code: string }> }>(
      'GET',
      `audit?tool=resources/read`,
    );
    expect(denied.entries.some((e) => e.result === 'denied' && e.error_code === 'not_found')).toBe(true);
  });
});

describe("an upstream's own protocol error", () => {
  it('a resource the upstream says does not exist (its -32602) answers as missing in both eras: -32002 (2025), -32602 (2026-07-28), not -32603', async () => {
    await u.ok('POST', 'upstreams', {
      id: 'tn',
      transport: {
        kind: 'stdio',
        command: process.execPath,
        args: [TEST_UPSTREAM],
        env: [{ name: 'NOTES', value: '1' }],
      },
    });
    const legacy = await connect(u.token);
    const modern = await connect(u.token, [], 'modern');
    const missing = 'gatehouse-upstream://tn/test://note/two';
    await until(
      async () =>
        (await legacy.listResourceTemplates()).resourceTemplates.some((t) =>
          t.uriTemplate.startsWith('gatehouse-upstream://tn/'),
        )
          ? true
          : null,
      10_000,
      "tn's template",
    );
    expect(textOfRead(await modern.readResource({ uri: 'gatehouse-upstream://tn/test://note/one' }))).toBe('note one');
    // the SDK client makes -32002 and -32602 one ResourceNotFoundError: the wire is read raw
    for (const [era, code] of [
      ['legacy', -32002],
      ['modern', -32602],
    ] as const) {
      const meta = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      };
      const res = await rawPost(
        u.w.svc.mcpUrl,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'resources/read',
          params: { uri: missing, ...(era === 'modern' ? { _meta: meta } : {}) },
        },
        {
          Authorization: `Bearer ${u.token}`,
          ...(era === 'modern'
            ? { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'resources/read', 'Mcp-Name': missing }
            : {}),
        },
      );
      const { error } = (await res.json()) as {
        error: { code: number; message: string; data: Record<string, unknown> };
      };
      expect(error, era).toMatchObject({ code, data: { code: 'not_found', uri: missing } });
      expect(error.message).toContain("upstream 'tn' answered with an error");
      await expect(modern.readResource({ uri: missing })).rejects.toThrow(/answered with an error/);
    }
    const audit = await u.ok<{ entries: Array<{ target: string; result: string; error_code?: string }> }>(
      'GET',
      'audit?tool=resources/read',
    );
    expect(audit.entries.find((e) => e.target === missing)).toMatchObject({ result: 'error', error_code: 'not_found' });
    await u.ok('DELETE', 'upstreams/tn');
  });
});

describe('what reaches an upstream passes the policy, and only what it offered', () => {
  it('a resources/read of a URI the upstream never listed, nor any template expands to, is not passed on', async () => {
    const c = await connect(u.token);
    await until(async () => ((await c.listResources()).resources.length ? true : null), 10_000, 'the resources');
    for (const uri of [
      'gatehouse-upstream://evs/file:///etc/passwd',
      'gatehouse-upstream://evs/demo://resource/static/document/../../x',
    ]) {
      // Gatehouse's own not_found (-32602, the wrapped URI), not the upstream's error passed on: it never saw the read
      const e = await c.readResource({ uri }).then(
        () => null,
        (x: { code: number; message: string }) => x,
      );
      expect(e?.code).toBe(-32602);
      expect(e?.message).toContain(`resource not found: ${uri}`);
    }
    // what the upstream listed and what its templates expand to still read
    expect(textOfRead(await c.readResource({ uri: `gatehouse-upstream://evs/${DOC}` }))).not.toBe('');
    expect(
      textOfRead(await c.readResource({ uri: 'gatehouse-upstream://evs/demo://resource/dynamic/text/7' })),
    ).not.toBe('');
  });

  it('prompts/get and resources/read are decided by the policy (get_prompt, read_resource), refused with the policy id and audited', async () => {
    const before = (await u.w.svc.dispatch('policy.get', {})) as { ok: true; data: { text: string } };
    const text = `${before.data.text}
@id("no-evs-prompts")
forbid (principal, action == Action::"get_prompt", resource) when { resource.plugin == "evs" };
@id("no-feature-docs")
forbid (principal, action == Action::"read_resource", resource) when { resource.uri like "*features.md" };
`;
    expect(await u.w.svc.dispatch('policy.set', { text })).toMatchObject({ ok: true });
    try {
      const c = await connect(u.token);
      await until(async () => ((await c.listPrompts()).prompts.length ? true : null), 10_000, 'the prompts');
      const refused = await c.getPrompt({ name: 'evs__simple-prompt' }).then(
        () => null,
        (e: { code: number; message: string; data?: { code: string } }) => e,
      );
      expect(refused).toMatchObject({ code: -32003, data: { code: 'policy_denied' } });
      expect(refused!.message).toContain("'no-evs-prompts'");
      await expect(c.readResource({ uri: `gatehouse-upstream://evs/${DOC}` })).rejects.toThrow(/no-feature-docs/);
      // what the policy does not forbid still works
      expect((await c.getPrompt({ name: 'evh__simple-prompt' })).messages.length).toBeGreaterThan(0);
      const audit = await u.ok<{
        entries: Array<{ tool: string; result: string; error_code: string; policy?: string[] }>;
      }>('GET', 'audit?result=denied');
      expect(audit.entries).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ tool: 'prompts/get', error_code: 'policy_denied', policy: ['no-evs-prompts'] }),
          expect.objectContaining({ tool: 'resources/read', error_code: 'policy_denied', policy: ['no-feature-docs'] }),
        ]),
      );
    } finally {
      await u.w.svc.dispatch('policy.set', { text: before.data.text });
    }
  });
});
