import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamMcpPath } from '../../main/contract/remote-upstreams.ts';
import { connectClient, rawPost } from '../helpers/service.ts';
import {
  EVERYTHING,
  startUpstreamWorld,
  textOf,
  until,
  type UpstreamWorld,
} from '../plugins/upstream/upstream-world.ts';

/**
 * One upstream's own endpoint (`.../upstreams/<id>/mcp`, main/mcp/upstream-view.ts): every method its
 * `initialize` advertises answers, in both eras, with that upstream's part only. Two real
 * server-everything processes behind the real service, read with the real SDK client.
 */
let u: UpstreamWorld;
const clients: Client[] = [];
const viewUrl = (id: string) => `${u.w.svc.baseUrl}${upstreamMcpPath(id)}`;
const DOC = 'demo://resource/static/document/features.md';

beforeAll(async () => {
  u = await startUpstreamWorld();
  for (const id of ['ev', 'evb'])
    await u.ok('POST', 'upstreams', {
      id,
      transport: { kind: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] },
    });
}, 120_000);
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await u?.stop();
});

async function view(era: 'legacy' | 'modern'): Promise<Client> {
  const c = await connectClient(viewUrl('ev'), u.token, era);
  clients.push(c);
  return c;
}

describe.each(['legacy', 'modern'] as const)("the per-upstream endpoint's advertised methods (%s era)", (era) => {
  it('advertises tools, resources, prompts and logging, and answers each of their methods with its own part', async () => {
    const c = await view(era);
    const caps = c.getServerCapabilities()!;
    expect(Object.keys(caps)).toEqual(expect.arrayContaining(['tools', 'resources', 'prompts', 'logging']));

    // ping and logging/setLevel are 2025-era methods (2026-07-28 removed them)
    if (era === 'legacy') {
      await c.ping();
      await c.setLoggingLevel('info');
    }

    const tools = (await c.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('echo');
    expect(tools.some((n) => n.includes('__'))).toBe(false);
    expect(textOf(await c.callTool({ name: 'echo', arguments: { message: 'through the window' } }))).toContain(
      'through the window',
    );

    const { resources } = (await until(
      async () => {
        const r = await c.listResources();
        return r.resources.length ? r : null;
      },
      10_000,
      "ev's resources",
    ))!;
    const uris = resources.map((r) => r.uri);
    expect(uris).toContain(`gatehouse-upstream://ev/${DOC}`);
    // another upstream's, and Gatehouse's own, are outside the window
    expect(uris.filter((x) => !x.startsWith('gatehouse-upstream://ev/'))).toEqual([]);
    const doc = await c.readResource({ uri: `gatehouse-upstream://ev/${DOC}` });
    expect(doc.contents[0]!.uri).toBe(`gatehouse-upstream://ev/${DOC}`);
    expect(String((doc.contents[0] as { text?: string }).text)).toMatch(/Prompts/);

    const { resourceTemplates } = await c.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain(
      'gatehouse-upstream://ev/demo://resource/dynamic/text/{resourceId}',
    );
    expect(resourceTemplates.every((t) => t.uriTemplate.startsWith('gatehouse-upstream://ev/'))).toBe(true);

    const { prompts } = await c.listPrompts();
    const names = prompts.map((p) => p.name);
    expect(names).toContain('args-prompt');
    expect(names.some((n) => n.includes('__'))).toBe(false);
    const got = await c.getPrompt({ name: 'args-prompt', arguments: { city: 'Lyon' } });
    expect(JSON.stringify(got.messages)).toContain('Lyon');
  });

  it("another upstream's prompt and resource, and Gatehouse's manual, answer as missing there (-32602), never -32603", async () => {
    const c = await view(era);
    const refused = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (e: { code?: number; message?: string }) => e,
      );
    for (const uri of [`gatehouse-upstream://evb/${DOC}`, 'gatehouse://manual']) {
      const e = await refused(c.readResource({ uri }));
      expect(e?.code, uri).toBe(-32602);
      expect(e?.message, uri).toContain('resource not found');
    }
    for (const name of ['evb__args-prompt', 'ev__args-prompt']) {
      const e = await refused(c.getPrompt({ name, arguments: { city: 'x' } }));
      expect(e?.code, name).toBe(-32602);
      expect(e?.message, name).toContain('prompt not found');
    }
  });

  it("completes its prompts' arguments under their names there, and advertises completions", async () => {
    const c = await view(era);
    expect(c.getServerCapabilities()?.completions).toEqual({});
    const r = await c.complete({
      ref: { type: 'ref/prompt', name: 'completable-prompt' },
      argument: { name: 'department', value: 'M' },
    });
    expect(r.completion.values).toEqual(['Marketing']);
  });
});

describe('the per-upstream endpoint on the wire', () => {
  it('answers every advertised list with a result, not an internal error naming a TypeError', async () => {
    for (const method of ['tools/list', 'resources/list', 'resources/templates/list', 'prompts/list']) {
      const res = await rawPost(
        viewUrl('ev'),
        { jsonrpc: '2.0', id: 1, method, params: {} },
        {
          Authorization: `Bearer ${u.token}`,
        },
      );
      const body = (await res.json()) as { result?: unknown; error?: { code: number; message: string } };
      expect(body.error, method).toBeUndefined();
      expect(body.result, method).toBeDefined();
      expect(JSON.stringify(body), method).not.toMatch(/TypeError|undefined/);
    }
  });
});
