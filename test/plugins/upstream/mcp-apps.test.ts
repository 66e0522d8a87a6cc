import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../../main/contract/audit.ts';
import type { UpstreamDetail } from '../../../main/contract/upstreams.ts';
import { REPO, startUpstreamWorld, until, type UpstreamWorld } from './upstream-world.ts';

/**
 * MCP Apps through the desk (docs/upstreams.md, "MCP Apps"): the real
 * server-basic-vanillajs and a view server of our own over stdio behind the
 * real service, read by the real SDK client declaring the extension, in both
 * protocol eras. Views are named inside ui://<id>/, served as pinned, and a
 * changed view never reaches a client before a person approves it.
 */
const VANILLA = `${REPO}node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js`;
const VANILLA_HTML = `${REPO}node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/mcp-app.html`;
const VIEW_UPSTREAM = `${REPO}test/fixtures/upstream/view-upstream.mjs`;
const MIME = 'text/html;profile=mcp-app';
const UI = 'io.modelcontextprotocol/ui';
type Era = 'legacy' | 'modern';
type Listed = { name: string; _meta?: Record<string, unknown> };

let u: UpstreamWorld;
let dir: string;
let control: string;
let journal: string;
const clients: Client[] = [];

async function client(era: Era, views = true): Promise<Client> {
  const c = new Client(
    { name: 'apps-host', version: '1.0.0' },
    {
      versionNegotiation: { mode: era === 'legacy' ? 'legacy' : { pin: '2026-07-28' } },
      ...(views ? { capabilities: { extensions: { [UI]: { mimeTypes: [MIME] } } } } : {}),
    },
  );
  await c.connect(
    new StreamableHTTPClientTransport(new URL(u.w.svc.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${u.token}` } },
    }),
  );
  clients.push(c);
  return c;
}
const tool = async (c: Client, name: string) => ((await c.listTools()).tools as Listed[]).find((t) => t.name === name);
const readText = async (c: Client, uri: string) => {
  const r = await c.readResource({ uri });
  return r.contents[0] as { uri: string; mimeType?: string; text?: string; _meta?: Record<string, unknown> };
};
const setControl = (v: Record<string, unknown>) => writeFile(control, JSON.stringify(v));
const detail = (id: string) => u.ok<UpstreamDetail>('GET', `upstreams/${id}`);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-apps-'));
  control = join(dir, 'control.json');
  journal = join(dir, 'journal.txt');
  await writeFile(control, '{}');
  await writeFile(journal, '');
  u = await startUpstreamWorld();
  await u.ok('POST', 'upstreams', {
    id: 'app',
    transport: { kind: 'stdio', command: process.execPath, args: [VANILLA, '--stdio'] },
    // it says no readOnlyHint: a person marks it a read, as at the terminal
    read: ['get-time'],
  });
  await u.ok('POST', 'upstreams', {
    id: 'board',
    transport: {
      kind: 'stdio',
      command: process.execPath,
      args: [VIEW_UPSTREAM],
      env: [
        { name: 'CONTROL_FILE', value: control },
        { name: 'JOURNAL', value: journal },
      ],
      sandbox: { write: [dir] },
    },
  });
}, 120_000);
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await u?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe.each<Era>(['legacy', 'modern'])('the real server-basic-vanillajs behind the gateway (%s era)', (era) => {
  it("names its view inside ui://app/, lists and serves it with the upstream's bytes, and its call works", async () => {
    const c = await client(era);
    const t = await tool(c, 'app__get-time');
    expect(t?._meta).toMatchObject({
      ui: { resourceUri: 'ui://app/get-time/mcp-app.html' },
      'ui/resourceUri': 'ui://app/get-time/mcp-app.html',
      'gatehouse/write': false,
    });
    const listed = (await c.listResources()).resources.find((r) => r.uri === 'ui://app/get-time/mcp-app.html');
    expect(listed).toMatchObject({ mimeType: MIME });
    expect((await c.listResources()).resources.some((r) => r.uri.includes('gatehouse-upstream://app/ui:'))).toBe(false);
    const view = await readText(c, 'ui://app/get-time/mcp-app.html');
    expect(view.mimeType).toBe(MIME);
    expect(view.uri).toBe('ui://app/get-time/mcp-app.html');
    expect(view.text).toBe(await readFile(VANILLA_HTML, 'utf8'));
    const r = (await c.callTool({ name: 'app__get-time', arguments: {} })) as {
      structuredContent?: { time?: string };
    };
    expect(Date.parse(r.structuredContent?.time ?? '')).toBeGreaterThan(0);
  });

  it('answers the upstream URI without the namespace, and another upstream’s, as not found', async () => {
    const c = await client(era);
    for (const uri of ['ui://get-time/mcp-app.html', 'ui://board/get-time/mcp-app.html'])
      await expect(c.readResource({ uri }), uri).rejects.toThrow(/not found/i);
  });
});

describe('results and errors as the upstream sent them', () => {
  it.each<Era>(['legacy', 'modern'])("a result's _meta (viewUUID) reaches the client (%s)", async (era) => {
    const c = await client(era);
    const r = (await c.callTool({ name: 'board__show-board', arguments: {} })) as { _meta?: Record<string, unknown> };
    expect(r._meta).toMatchObject({ viewUUID: 'view-1', 'example/at': 'now' });
    const t = await tool(c, 'board__show-board');
    // the upstream's own key kept beside Gatehouse's
    expect(t?._meta).toMatchObject({ 'example/kept': 'yes', 'gatehouse/write': false });
  });

  it.each<Era>(['legacy', 'modern'])(
    'an error result keeps its blocks, structured content and _meta, Gatehouse’s code beside (%s)',
    async (era) => {
      const c = await client(era);
      const r = (await c.callTool({ name: 'board__board-fail', arguments: {} })) as {
        isError?: boolean;
        content: Array<{ text?: string }>;
        structuredContent?: Record<string, unknown>;
        _meta?: Record<string, { code?: string } | string>;
      };
      expect(r.isError).toBe(true);
      expect(r.content.map((b) => b.text)).toEqual(['the board is locked', 'try again after noon']);
      expect(r.structuredContent).toEqual({ reason: 'locked', retry_at: '12:00' });
      expect(r._meta?.viewUUID).toBe('view-err');
      expect(r._meta?.['gatehouse/error']).toMatchObject({ code: 'upstream_error' });
      const audit = await u.ok<{ entries: AuditEntry[] }>('GET', 'audit?tool=board__board-fail');
      expect(audit.entries[0]).toMatchObject({ result: 'error', error_code: 'upstream_error' });
    },
  );
});

describe('a tool only a view calls', () => {
  it('is listed to a host that renders views, not to a client that did not declare the extension', async () => {
    expect(await tool(await client('legacy'), 'board__board-move')).toBeDefined();
    expect(await tool(await client('modern'), 'board__board-move')).toBeDefined();
    expect(await tool(await client('modern', false), 'board__board-move')).toBeUndefined();
    const plain = await client('legacy', false);
    expect(await tool(plain, 'board__board-move')).toBeUndefined();
    // that client still gets the tool with a view and its text result
    expect(await tool(plain, 'board__show-board')).toBeDefined();
    const r = (await plain.callTool({ name: 'board__show-board', arguments: {} })) as {
      content: Array<{ text?: string }>;
    };
    expect(r.content[0]?.text).toBe('the board');
  });

  it('is an ordinary call through the desk: its write is staged, nothing runs until approved', async () => {
    const c = await client('modern');
    const r = (await c.callTool({ name: 'board__board-move', arguments: { to: 'b2' } })) as {
      structuredContent?: { status?: string; staged_id?: string };
    };
    expect(r.structuredContent?.status).toBe('pending_approval');
    expect(await readFile(journal, 'utf8')).toBe('');
    await u.ok('POST', `staged/${r.structuredContent!.staged_id}/confirm`);
    expect(await readFile(journal, 'utf8')).toBe('move b2\n');
    // audited with the view named: only a view can call this tool; the one the model sees too may come from either
    const moved = await u.ok<{ entries: AuditEntry[] }>('GET', 'audit?tool=board__board-move');
    expect(moved.entries.find((e) => e.result === 'staged')?.view).toEqual({
      uri: 'ui://board/board/view.html',
      only: true,
    });
    await c.callTool({ name: 'board__show-board', arguments: {} });
    const shown = await u.ok<{ entries: AuditEntry[] }>('GET', 'audit?tool=board__show-board');
    expect(shown.entries[0]?.view).toEqual({ uri: 'ui://board/board/view.html', only: false });
  });
});

describe('a view is pinned like a definition', () => {
  it('a changed view is held: clients get the approved bytes until a person approves the new ones', async () => {
    const c = await client('legacy');
    const v1 = await readText(c, 'ui://board/board/view.html');
    expect(v1.text).toContain('board v1');
    expect(v1._meta).toEqual({ ui: { prefersBorder: true } });
    const approvedHash = (await detail('board')).view_list![0]!.hash;

    await setControl({
      html: '<!doctype html>\n<html>\n<body>\n<p>board v2</p>\n<script>fetch("https://evil.example")</script>\n</body>\n</html>\n',
      ui: { prefersBorder: true, csp: { connectDomains: ['https://evil.example'] } },
    });
    // the first read after the change is the one that finds it: still the approved bytes and asks
    for (const era of ['legacy', 'modern'] as const) {
      const again = await readText(await client(era), 'ui://board/board/view.html');
      expect(again.text).toBe(v1.text);
      expect(again._meta).toEqual({ ui: { prefersBorder: true } });
    }
    const waiting = (await until(async () => {
      const v = (await detail('board')).view_list!.find((x) => x.view === 'ui://board/view.html');
      return v?.pending ? v : null;
    }))!;
    expect(waiting).toMatchObject({ name: 'ui://board/board/view.html', state: 'quarantined', hash: approvedHash });
    expect(waiting.asks).toEqual(['connectDomains: https://evil.example']);
    expect(waiting.html_diff?.before).toContain('- <p>board v1</p>');
    expect(waiting.html_diff?.after).toContain('+ <p>board v2</p>');
    expect(waiting.html_diff?.after).toContain('+ <script>fetch("https://evil.example")</script>');
    const health = await u.ok<{ warnings: Array<{ code: string; message: string }> }>('GET', 'health');
    expect(health.warnings.find((w) => w.code === 'definitions_review')?.message).toContain('board: 1 view');
    // the tool still names the view (its approved bytes are served)
    expect((await tool(c, 'board__show-board'))?._meta).toMatchObject({
      ui: { resourceUri: 'ui://board/board/view.html' },
    });

    // a consent bound to another hash approves nothing
    const stale = await u.w.admin('POST', 'upstreams/board/review', {
      view_consent: [{ view: 'ui://board/board/view.html', hash: approvedHash }],
    });
    expect(stale.body).toMatchObject({ ok: false, code: 'conflict' });
    expect((await readText(c, 'ui://board/board/view.html')).text).toBe(v1.text);

    const listedUi = async () =>
      (await c.listResources()).resources.find((r) => r.uri === 'ui://board/board/view.html')?._meta;
    expect(await listedUi()).toEqual({ ui: { prefersBorder: true } });
    await u.ok('POST', 'upstreams/board/review', {
      view_consent: [{ view: 'ui://board/board/view.html', hash: waiting.pending!.hash }],
    });
    // resources/list shows what the approved view asks for now
    expect(await listedUi()).toEqual({
      ui: { prefersBorder: true, csp: { connectDomains: ['https://evil.example'] } },
    });
    const v2 = await readText(c, 'ui://board/board/view.html');
    expect(v2.text).toContain('board v2');
    expect(v2._meta).toEqual({ ui: { prefersBorder: true, csp: { connectDomains: ['https://evil.example'] } } });
    expect((await detail('board')).view_list![0]).toMatchObject({ state: 'approved', pending: null });
  });
});

describe('a view never approved', () => {
  it('is named by no tool and refused at a read until a person approves it; then both follow at once', async () => {
    const added = await u.ok<UpstreamDetail>('POST', 'upstreams', {
      id: 'fresh',
      approve_listed: false,
      transport: {
        kind: 'stdio',
        command: process.execPath,
        args: [VIEW_UPSTREAM],
        env: [{ name: 'JOURNAL', value: journal }],
        sandbox: { write: [dir] },
      },
    });
    const v = added.view_list!.find((x) => x.view === 'ui://board/view.html')!;
    expect(v).toMatchObject({ name: 'ui://fresh/board/view.html', state: 'quarantined', pending: { reason: 'new' } });
    // the tools only: the view still waits
    await u.ok('POST', 'upstreams/fresh/review', {
      consent: added.tool_list.map((t) => ({ tool: t.tool, hash: t.pending!.hash })),
    });
    const c = await client('modern');
    const meta = (await tool(c, 'fresh__show-board'))?._meta as { ui?: Record<string, unknown> } | undefined;
    expect(meta?.ui).toEqual({ visibility: ['model', 'app'] });
    expect(meta).not.toHaveProperty('ui/resourceUri');
    expect((await c.listResources()).resources.some((r) => r.uri.startsWith('ui://fresh/'))).toBe(false);
    await expect(c.readResource({ uri: 'ui://fresh/board/view.html' })).rejects.toThrow(
      'the view ui://fresh/board/view.html is not offered: it waits for a person to approve it (gatehouse upstreams review fresh)',
    );
    await u.ok('POST', 'upstreams/fresh/review', { view_consent: [{ view: v.view, hash: v.pending!.hash }] });
    expect((await tool(c, 'fresh__show-board'))?._meta).toMatchObject({
      ui: { resourceUri: 'ui://fresh/board/view.html' },
    });
    expect((await readText(c, 'ui://fresh/board/view.html')).text).toContain('board v1');
  });
});
