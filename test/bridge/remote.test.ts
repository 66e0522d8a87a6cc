import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditPage } from '../../main/contract/audit.ts';
import type { StagedPayload } from '../../main/contract/staged.ts';
import { UPSTREAM_LOOKUP_PATH, upstreamMcpPath } from '../../main/contract/remote-upstreams.ts';
import { connectClient } from '../helpers/service.ts';
import { startNotesServer, type NotesServer } from '../fixtures/upstream/bearer-notes-server.ts';
import { startUpstreamWorld, textOf, type UpstreamWorld } from '../plugins/upstream/upstream-world.ts';
import { type BridgedClient, bridgedClient } from './helpers/bridge-client.ts';
import { ensureBundle } from './helpers/bundle.ts';

/**
 * `gatehouse-bridge --remote URL`: the real bridge bundle spawned
 * as a stdio server for the real SDK client, relaying through the real,
 * licensed service to a real remote MCP server that wants a static bearer
 * token the service keeps in its vault. The client sees the remote's tools
 * under their own names; writes are staged for a person; the remote's token
 * never reaches the bridge or the client.
 */

const SECRET = `remote-secret-${randomUUID()}`;
const OTHER_SECRET = `other-secret-${randomUUID()}`;
let u: UpstreamWorld;
let notes: NotesServer;
let other: NotesServer;
let account: string;
const bridges: BridgedClient[] = [];

const bridge = async (args: string[], env: Record<string, string> = {}) => {
  const b = await bridgedClient(args, { env });
  bridges.push(b);
  return b;
};
const remoteArgs = (url: string) => [
  '--data-dir',
  u.w.svc.dataDir,
  '--vault',
  'file',
  '--token-keychain',
  account,
  '--log-level',
  'debug',
  '--remote',
  url,
];
const lookup = (token: string | null, url: string) =>
  fetch(`${u.w.svc.baseUrl}${UPSTREAM_LOOKUP_PATH}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ url }),
  });

beforeAll(async () => {
  await ensureBundle();
  notes = await startNotesServer(SECRET);
  other = await startNotesServer(OTHER_SECRET);
  u = await startUpstreamWorld();
  await u.ok('POST', 'upstreams', {
    id: 'notes',
    transport: { kind: 'http', url: notes.url, headers: [{ name: 'Authorization', value: `Bearer ${SECRET}` }] },
  });
  await u.ok('POST', 'upstreams', {
    id: 'other',
    transport: { kind: 'http', url: other.url, headers: [{ name: 'Authorization', value: `Bearer ${OTHER_SECRET}` }] },
  });
  account = `remote-bridge-${randomUUID()}`;
  await u.w.svc.createToken({ label: 'remote bridge', user: 'admin', keychain_account: account });
}, 120_000);
afterAll(async () => {
  for (const b of bridges) await b.close().catch(() => undefined);
  await u?.stop();
  await notes?.stop();
  await other?.stop();
});

describe('gatehouse-bridge --remote URL through the service', () => {
  it("lists the remote's tools under their own names, reads at once, stages a write that applies once after approval, and audits it", async () => {
    // Written the other way round from what was stored (upper-case host, trailing slash): the same remote.
    const given = `${notes.url.replace('127.0.0.1', '127.0.0.1'.toUpperCase())}/`;
    const { client, stderr, pid } = await bridge(remoteArgs(given));
    const seen: string[] = [];
    const onmessage = client.transport!.onmessage!;
    client.transport!.onmessage = (m, extra) => {
      seen.push(JSON.stringify(m));
      onmessage(m, extra);
    };
    expect(client.getInstructions()).toMatch(/remote MCP server 'notes'/);
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(['add_note', 'read_notes', 'staged_writes_list', 'staged_writes_status']);

    expect(textOf(await client.callTool({ name: 'read_notes', arguments: {} }))).toBe('(no notes)');
    const staged = await client.callTool({ name: 'add_note', arguments: { text: 'from the bridge' } });
    const s = staged.structuredContent as { status: string; staged_id: string };
    expect(s.status).toBe('pending_approval');
    expect(notes.notes).toEqual([]);

    // A person approves it (the console's API); the remote is called once, a second confirm changes nothing.
    expect((await u.ok<StagedPayload>('POST', `staged/${s.staged_id}/confirm`)).status).toBe('confirmed');
    await u.ok('POST', `staged/${s.staged_id}/confirm`);
    expect(notes.notes).toEqual(['from the bridge']);
    const status = await client.callTool({ name: 'staged_writes_status', arguments: { staged_id: s.staged_id } });
    expect(status.structuredContent).toMatchObject({ status: 'confirmed', tool: 'notes__add_note' });
    expect(textOf(await client.callTool({ name: 'read_notes', arguments: {} }))).toBe('from the bridge');
    // Nothing outside the window: a site tool, another upstream's tool, a namespaced name.
    for (const name of ['pages_list', 'other__read_notes', 'notes__read_notes', 'discover_tools']) {
      await expect(client.callTool({ name, arguments: {} })).rejects.toThrow(/unknown tool/i);
    }

    const audit = await u.ok<AuditPage>('GET', 'audit?plugin=notes&limit=50');
    const rows = audit.entries.filter((e) => e.tool === 'notes__add_note').map((e) => e.result);
    expect(rows).toEqual(expect.arrayContaining(['staged', 'confirmed']));
    expect(audit.entries.some((e) => e.tool === 'notes__read_notes' && e.result === 'ok')).toBe(true);

    // The remote's token reached the remote from the service only, and nothing else did.
    expect(new Set(notes.authorizations)).toEqual(new Set([`Bearer ${SECRET}`]));
    expect(stderr()).toContain('through the Gatehouse service');
    for (const text of [stderr(), seen.join('\n'), JSON.stringify(audit)]) expect(text).not.toContain(SECRET);
    const environ = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
    expect(environ).not.toContain(SECRET);
  });

  it('with no upstream for the URL: says which command adds it (with --oauth)', async () => {
    const url = 'https://mcp.unconfigured.example/mcp';
    const b = await bridgedClient(remoteArgs(url), { connect: false });
    bridges.push(b);
    const failed = await b.client.connect(b.transport).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(failed).toContain(`gatehouse upstreams add ID --url ${url} --oauth`);
    expect(b.stderr()).toContain('no upstream in Gatehouse is configured for');
  });

  it('with no service running: says how to start one', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'gh-remote-nosvc-'));
    try {
      const b = await bridgedClient(
        ['--data-dir', empty, '--token-env', 'GH_TEST_TOKEN', '--connect-timeout', '0', '--remote', notes.url],
        { env: { GH_TEST_TOKEN: `gth_${'a'.repeat(43)}` }, connect: false },
      );
      bridges.push(b);
      const failed = await b.client.connect(b.transport).then(
        () => null,
        (e: Error) => e.message,
      );
      expect(failed).toMatch(/Gatehouse is not running/);
      expect(failed).toMatch(/start the Gatehouse app or `gatehouse serve`/);
      expect(failed).toMatch(/--remote goes through the Gatehouse service/);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});

describe('what a client token learns from the lookup and the per-upstream endpoint', () => {
  it('only ids of upstreams it may use, never a URL or a header; others answer exactly like none', async () => {
    await u.ok('POST', 'profiles', { name: 'only-notes', upstreams: ['notes'] });
    const narrow = (await u.w.svc.createToken({ label: 'only notes', user: 'admin', scope: { profile: 'only-notes' } }))
      .token;
    await u.ok('POST', 'users', { login: 'reader', role: 'author' });
    const agent = (await u.w.svc.createToken({ label: 'no upstreams', user: 'reader' })).token;

    const answer = async (token: string | null, url: string) => {
      const r = await lookup(token, url);
      return { status: r.status, text: await r.text() };
    };
    const mine = await answer(narrow, notes.url);
    expect(JSON.parse(mine.text)).toEqual({
      ok: true,
      data: { upstreams: [{ id: 'notes', mcp_path: upstreamMcpPath('notes') }] },
    });
    const none = JSON.stringify({ ok: true, data: { upstreams: [] } });
    // Another upstream's URL, a URL nobody configured, and a token whose user may not use upstreams (an author): the same empty answer.
    expect(await answer(narrow, other.url)).toEqual({ status: 200, text: none });
    expect(await answer(narrow, 'https://nowhere.example/mcp')).toEqual({ status: 200, text: none });
    expect(await answer(agent, notes.url)).toEqual({ status: 200, text: none });
    for (const a of [mine, await answer(narrow, other.url)]) {
      for (const secret of [SECRET, OTHER_SECRET, 'Authorization', other.url]) expect(a.text).not.toContain(secret);
    }
    // No token, a GET, a body that is not {url}: refused.
    expect((await answer(null, notes.url)).status).toBe(401);
    expect(
      (await fetch(`${u.w.svc.baseUrl}${UPSTREAM_LOOKUP_PATH}`, { headers: { Authorization: `Bearer ${narrow}` } }))
        .status,
    ).toBe(405);
    const bad = await fetch(`${u.w.svc.baseUrl}${UPSTREAM_LOOKUP_PATH}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${narrow}`, 'Content-Type': 'application/json' },
      body: '{"url": {"__proto__": 1}}',
    });
    expect([bad.status, (await bad.json()).code]).toEqual([400, 'invalid_value']);

    // The other upstream's own endpoint shows this token nothing of it, and calls there are unknown tools (both protocol eras).
    for (const era of ['legacy', 'modern'] as const) {
      const c = await connectClient(`${u.w.svc.baseUrl}${upstreamMcpPath('other')}`, narrow, era);
      try {
        expect((await c.listTools()).tools.map((t) => t.name).filter((n) => !n.startsWith('staged_writes_'))).toEqual(
          [],
        );
        await expect(c.callTool({ name: 'read_notes', arguments: {} })).rejects.toThrow(/unknown tool/i);
        // while its own window works for it, under the remote's names
        const mine = await connectClient(`${u.w.svc.baseUrl}${upstreamMcpPath('notes')}`, narrow, era);
        expect((await mine.listTools()).tools.map((t) => t.name)).toContain('read_notes');
        await mine.close();
      } finally {
        await c.close();
      }
    }
    expect(other.notes).toEqual([]);
    // And the admin API stays closed to client tokens.
    expect(
      (await fetch(`${u.w.svc.adminUrl}/upstreams`, { headers: { Authorization: `Bearer ${narrow}` } })).status,
    ).toBe(403);
  });
});
