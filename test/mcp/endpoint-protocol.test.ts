import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, startTestService, type Era } from '../helpers/service.ts';

let svc: Awaited<ReturnType<typeof startTestService>>;
let adminToken: string;
let authorToken: string;

beforeAll(async () => {
  svc = await startTestService();
  adminToken = (await svc.createToken({ label: 'admin client' })).token;
  const r = await svc.dispatch('users.add', { login: 'ann', role: 'author' });
  expect(r.ok).toBe(true);
  authorToken = (await svc.createToken({ label: 'author client', user: 'ann' })).token;
});
afterAll(async () => svc?.cleanup());

describe.each<Era>(['legacy', 'modern'])('MCP over Streamable HTTP, %s era', (era) => {
  it('returns the operating manual as instructions and as a resource', async () => {
    const client = await connectClient(svc.mcpUrl, adminToken, era);
    try {
      const instructions = client.getInstructions();
      expect(instructions).toContain('Gatehouse operating manual');
      expect(instructions).toContain('site_identity');
      const list = await client.listResources();
      const uris = list.resources.map((r) => r.uri);
      expect(uris).toEqual(
        expect.arrayContaining(['gatehouse://manual', 'gatehouse://site/identity', 'gatehouse://site/pages']),
      );
      const manual = await client.readResource({ uri: 'gatehouse://manual' });
      expect((manual.contents[0] as { text: string }).text).toContain('staged');
      const identity = await client.readResource({ uri: 'gatehouse://site/identity' });
      expect(JSON.parse((identity.contents[0] as { text: string }).text)).toHaveProperty('name');
    } finally {
      await client.close();
    }
  });

  it('lists the built-in and site tools with schemas and annotations, and calls a read tool', async () => {
    const client = await connectClient(svc.mcpUrl, adminToken, era);
    try {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      expect(names).toEqual(
        expect.arrayContaining([
          'site_identity',
          'discover_tools',
          'staged_writes_list',
          'staged_writes_status',
          'pages_list',
          'pages_update',
          'pages_delete',
          'seo_analyze_page',
        ]),
      );
      expect(names).not.toContain('staged_writes_confirm');
      const update = tools.find((t) => t.name === 'pages_update')!;
      expect(update.inputSchema.type).toBe('object');
      expect(update.annotations?.readOnlyHint).toBe(false);
      // one source for the title: annotations.title is always the tool's title
      for (const t of tools) expect(t.annotations?.title, t.name).toBe(t.title);
      expect(tools.find((t) => t.name === 'pages_publish')?.title).toBe('Publish or unpublish a page');
      const res = await client.callTool({ name: 'pages_list', arguments: { per_page: 2 } });
      expect(res.isError).toBeFalsy();
      expect((res.structuredContent as { pages: unknown[] }).pages).toHaveLength(2);
    } finally {
      await client.close();
    }
  });

  it("an author's token neither sees nor calls administrator tools", async () => {
    const client = await connectClient(svc.mcpUrl, authorToken, era);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('pages_update');
      expect(names).not.toContain('pages_delete');
      await expect(client.callTool({ name: 'pages_delete', arguments: { id: 1 } })).rejects.toMatchObject({
        code: -32602,
      });
      await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    } finally {
      await client.close();
    }
  });
});

describe('discover_tools', () => {
  it('searches only the tools the caller may use, paginated', async () => {
    const client = await connectClient(svc.mcpUrl, authorToken);
    try {
      const first = await client.callTool({ name: 'discover_tools', arguments: { query: 'page', limit: 2 } });
      const page1 = first.structuredContent as {
        tools: Array<{ name: string }>;
        next_cursor: string | null;
        total: number;
      };
      expect(page1.tools).toHaveLength(2);
      expect(page1.next_cursor).not.toBeNull();
      const all = await client.callTool({ name: 'discover_tools', arguments: { query: 'page', limit: 100 } });
      const names = (all.structuredContent as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
      expect(names).not.toContain('pages_delete');
      const writes = await client.callTool({
        name: 'discover_tools',
        arguments: { plugin: 'site', write: true, limit: 100 },
      });
      for (const t of (writes.structuredContent as { tools: Array<{ write: boolean; name: string }> }).tools)
        expect(t.write).toBe(true);
    } finally {
      await client.close();
    }
  });
});

describe('health', () => {
  it('lists recently seen clients with the name they gave', async () => {
    const client = await connectClient(svc.mcpUrl, adminToken);
    await client.callTool({ name: 'site_identity', arguments: {} });
    await client.close();
    const health = await svc.dispatch('health.get', {});
    expect(health.ok && health.data.recent_clients.find((c) => c.label === 'admin client')?.client).toBe(
      'gatehouse-test',
    );
  });
});
