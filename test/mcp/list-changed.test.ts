import { afterEach, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startTestService } from '../helpers/service.ts';
import { echoTool, runtimePlugin } from '../helpers/core.ts';
import { upstreamMcpPath } from '../../main/contract/remote-upstreams.ts';

type Svc = Awaited<ReturnType<typeof startTestService>>;
let svc: Svc | null = null;
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await svc?.cleanup();
  svc = null;
});

/** Waits for a condition the service reaches asynchronously (bounded, never a timing assertion: under the test timeout, as the first policy decision loads the Cedar engine, seconds on a loaded machine). */
async function until(what: string, cond: () => boolean, ms = 25_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The real SDK client with a tools listChanged handler, in either protocol era. */
async function listeningClient(url: string, token: string, era: 'legacy' | 'modern') {
  const lists: string[][] = [];
  const client = new Client(
    { name: 'list-changed-test', version: '1.0.0' },
    {
      versionNegotiation: { mode: era === 'legacy' ? 'legacy' : { pin: '2026-07-28' } },
      listChanged: {
        tools: {
          debounceMs: 0,
          onChanged: (error, tools) => {
            if (!error && tools) lists.push(tools.map((t) => t.name));
          },
        },
      },
    },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  clients.push(client);
  return { client, lists, latest: () => lists[lists.length - 1] ?? [] };
}

/** A raw Streamable HTTP GET stream, counting the notifications it carries. */
async function rawStream(url: string, token: string) {
  const ctrl = new AbortController();
  const res = await fetch(url, {
    headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' },
    signal: ctrl.signal,
  });
  const seen: string[] = [];
  let ended = false;
  void (async () => {
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let buf = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (data) seen.push((JSON.parse(data) as { method: string }).method);
        }
      }
    } catch {
      // aborted
    }
    ended = true;
  })();
  return { res, seen, ended: () => ended, close: () => ctrl.abort() };
}

describe.each(['legacy', 'modern'] as const)('list_changed reaches a connected %s-era SDK client', (era) => {
  it('when a plugin adds, changes and removes a tool at run time', async () => {
    const rt = runtimePlugin('runtime');
    svc = await startTestService({ plugins: [rt.plugin] });
    const { token } = await svc.createToken({ label: era });
    const c = await listeningClient(svc.mcpUrl, token, era);
    await until('the notification channel', () => svc!.notificationChannels() === 1);
    expect((await c.client.listTools()).tools.map((t) => t.name)).not.toContain('added_at_runtime');

    rt.host.putTool(echoTool('added_at_runtime'));
    await until('the new tool in the refreshed list', () => c.latest().includes('added_at_runtime'));
    const tool = (await c.client.listTools()).tools.find((t) => t.name === 'added_at_runtime')!;
    expect(tool.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } } });
    expect(
      (await c.client.callTool({ name: 'added_at_runtime', arguments: { text: 'hello' } })).structuredContent,
    ).toEqual({ echoed: 'hello' });

    rt.host.removeTool('added_at_runtime');
    await until(
      'the tool gone from the refreshed list',
      () => c.lists.length >= 2 && !c.latest().includes('added_at_runtime'),
    );
  });

  it('when approval_mode changes which tools the token sees', async () => {
    svc = await startTestService();
    const { token } = await svc.createToken({ label: era });
    const c = await listeningClient(svc.mcpUrl, token, era);
    await until('the notification channel', () => svc!.notificationChannels() === 1);
    expect((await c.client.listTools()).tools.map((t) => t.name)).not.toContain('staged_writes_confirm');
    await svc.dispatch('settings.update', { approval_mode: 'agent' });
    await until('the agent tools in the refreshed list', () => c.latest().includes('staged_writes_confirm'));
    // the instructions of a new connection now say the agent may confirm
    const fresh = await listeningClient(svc.mcpUrl, token, era);
    expect(fresh.client.getInstructions()).toMatch(/you may confirm or discard your own staged writes/);
  });

  it('when a new policy forbids a tool the token saw (tools/list asks the policy)', async () => {
    svc = await startTestService();
    const { token } = await svc.createToken({ label: era });
    const c = await listeningClient(svc.mcpUrl, token, era);
    await until('the notification channel', () => svc!.notificationChannels() === 1);
    expect((await c.client.listTools()).tools.map((t) => t.name)).toContain('pages_delete');
    const shown = await svc.dispatch('policy.get', {});
    if (!shown.ok) throw new Error(shown.message);
    const text = `${shown.data.text}\n@id("no-deletes")\nforbid (principal, action, resource == Tool::"pages_delete");\n`;
    expect((await svc.dispatch('policy.set', { text })).ok).toBe(true);
    await until(
      'the refreshed list without the forbidden tool',
      () => c.lists.length >= 1 && !c.latest().includes('pages_delete'),
    );
    expect(c.latest()).toContain('pages_get');
  });
});

describe('list_changed goes only to tokens whose view changed', () => {
  it('disabling a tool notifies the tokens that saw it, not a token narrowed to others', async () => {
    svc = await startTestService();
    const wide = (await svc.createToken({ label: 'wide' })).token;
    const narrow = (await svc.createToken({ label: 'narrow', scope: { tools: ['pages_get'] } })).token;
    const a = await rawStream(svc.mcpUrl, wide);
    const b = await rawStream(svc.mcpUrl, narrow);
    expect(a.res.status).toBe(200);
    expect(a.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await until('both streams', () => svc!.notificationChannels() === 2);

    // site_identity goes, and with it the site identity resource that follows it
    await svc.dispatch('settings.update', { disabled_tools: ['site_identity'] });
    await until('the wide token told', () => a.seen.length === 2);
    expect(a.seen).toEqual(['notifications/tools/list_changed', 'notifications/resources/list_changed']);
    await svc.dispatch('settings.update', { disabled_tools: ['site_identity', 'pages_get'] });
    await until('both told of the second change', () => a.seen.length === 3 && b.seen.length === 1);
    // the narrow token heard only the change that touched its one tool
    expect(b.seen).toEqual(['notifications/tools/list_changed']);
    // the page index resource follows pages_list, which stayed visible: no second resources/list_changed
    expect(a.seen[2]).toBe('notifications/tools/list_changed');
    a.close();
    b.close();
  });

  it('a plugin listing the same tools again (new objects, same definitions) tells no one; a real change still does', async () => {
    const rt = runtimePlugin('runtime');
    svc = await startTestService({ plugins: [rt.plugin] });
    const { token } = await svc.createToken({ label: 'steady' });
    const a = await rawStream(svc.mcpUrl, token);
    await until('the stream', () => svc!.notificationChannels() === 1);
    rt.host.setTools([echoTool('runtime_echo')]);
    await until('the first change heard', () => a.seen.length === 1);
    // the same definitions again, as an upstream re-listing after a reconnect gives them
    rt.host.setTools([echoTool('runtime_echo')]);
    // the registry's change is checked on the next turn of the event loop: let that turn pass
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    rt.host.setTools([echoTool('runtime_echo', 'runtime', { description: 'Now described otherwise.' })]);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    // a resource of its own last: its notification comes after every earlier one on the same stream
    rt.host.setResources([
      {
        uri: 'runtime://note',
        name: 'note',
        mimeType: 'text/plain',
        capability: 'read',
        public: true,
        read: async () => 'n',
      },
    ]);
    await until('the resource change heard', () => a.seen.includes('notifications/resources/list_changed'));
    expect(a.seen).toEqual([
      'notifications/tools/list_changed',
      'notifications/tools/list_changed',
      'notifications/resources/list_changed',
    ]);
    a.close();
  });

  it("a client of one upstream's own endpoint hears only that upstream's changes", async () => {
    const rta = runtimePlugin('rta');
    const rtb = runtimePlugin('rtb');
    svc = await startTestService({ plugins: [rta.plugin, rtb.plugin] });
    const { token } = await svc.createToken({ label: 'views' });
    const viewUrl = (id: string) => new URL(upstreamMcpPath(id), svc!.mcpUrl).href;
    const main = await rawStream(svc.mcpUrl, token);
    const ofA = await rawStream(viewUrl('rta'), token);
    expect(ofA.res.status).toBe(200);
    await until('both streams', () => svc!.notificationChannels() === 2);
    rtb.host.setTools([echoTool('rtb__echo', 'rtb')]);
    await until('the main endpoint told', () => main.seen.length === 1);
    rta.host.setTools([echoTool('rta__echo', 'rta')]);
    await until('both told of the change in view', () => main.seen.length === 2 && ofA.seen.length === 1);
    // the view heard one change: its own upstream's, not the other's
    expect(ofA.seen).toEqual(['notifications/tools/list_changed']);
    main.close();
    ofA.close();
  });

  it('a revoked token loses its stream; one token holds a bounded number of streams', async () => {
    svc = await startTestService();
    const created = await svc.createToken({ label: 'soon revoked' });
    const streams: Awaited<ReturnType<typeof rawStream>>[] = [];
    for (let i = 0; i < 6; i++) streams.push(await rawStream(svc.mcpUrl, created.token));
    await until('older streams closed past the per-token bound', () => streams.filter((s) => s.ended()).length === 2);
    expect(svc.notificationChannels()).toBe(4);
    await svc.revokeToken(created.record.id);
    await svc.dispatch('settings.update', { disabled_tools: ['site_identity'] });
    await until('every stream ended', () => streams.every((s) => s.ended()));
    expect(svc.notificationChannels()).toBe(0);
    const again = await fetch(svc.mcpUrl, {
      headers: { Authorization: `Bearer ${created.token}`, Accept: 'text/event-stream' },
    });
    expect(again.status).toBe(401);
  });
});
