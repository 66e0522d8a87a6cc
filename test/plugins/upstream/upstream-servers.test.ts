import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamDetail, UpstreamView } from '../../../main/contract/upstreams.ts';
import type { StagedPayload } from '../../../main/contract/staged.ts';
import { clientTokenAccount } from '../../../main/store/vault-account.ts';
import { startTestService } from '../../helpers/service.ts';
import { freePort, startEverythingHttp } from './everything-http.ts';
import { FILESYSTEM, startUpstreamWorld, textOf, until, type UpstreamWorld } from './upstream-world.ts';

/** The real MCP servers from npm behind Gatehouse: server-everything over Streamable HTTP, server-filesystem over stdio, a second Gatehouse. */
let u: UpstreamWorld;
let client: Client;
let dir: string;
let port: number;
let everything: { stop(): Promise<void> } | null = null;

/** server-everything's own HTTP mode, started and stopped by the tests. */
async function startEverything(): Promise<void> {
  everything = await startEverythingHttp(port);
}
async function stopEverything(): Promise<void> {
  const e = everything;
  everything = null;
  await e?.stop();
}
const call = (name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args });
const view = async (id: string) => (await u.ok<UpstreamView[]>('GET', 'upstreams')).find((x) => x.id === id)!;

beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'gh-upstream-fs-')));
  port = await freePort();
  await startEverything();
  u = await startUpstreamWorld();
  client = await u.mcp();
}, 120_000);
afterAll(async () => {
  await client?.close();
  await u?.stop();
  await stopEverything();
  await rm(dir, { recursive: true, force: true });
});

describe('server-everything over Streamable HTTP', () => {
  it('is added by URL, its era remembered, and its tools answer with progress passed through', async () => {
    const d = await u.ok<UpstreamDetail>('POST', 'upstreams', {
      id: 'evh',
      transport: {
        kind: 'http',
        url: `http://127.0.0.1:${port}/mcp`,
        headers: [{ name: 'X-Trace', value: 'trace-secret-123456' }],
      },
    });
    expect(d).toMatchObject({ kind: 'http', header_names: ['X-Trace'], health: { status: 'connected' } });
    expect(d.health.era).toBe('2025');
    expect(d.health.protocol).toMatch(/^20\d\d-\d\d-\d\d$/);
    expect(JSON.stringify(d)).not.toContain('trace-secret-123456');
    expect(textOf(await call('evh__echo', { message: 'over http' }))).toBe('Echo: over http');
    const sum = await call('evh__get-sum', { a: 2, b: 3 });
    expect(textOf(sum)).toMatch(/5/);
    const seen: number[] = [];
    const long = await client.callTool(
      { name: 'evh__trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } },
      { onprogress: (p) => seen.push(p.progress) },
    );
    expect(textOf(long)).toMatch(/Long running operation completed/);
    // (the last progress before the result may be dropped by the SDK's ordering: see upstream-stdio.test.ts)
    expect(seen.slice(0, 2)).toEqual([1, 2]);
    const structured = await call('evh__get-structured-content', { location: 'New York' });
    expect(structured.structuredContent).toMatchObject({ temperature: expect.any(Number) });
  });

  it('down: answers upstream_unavailable at once; back: reconnects by itself (also when it was down when the plugin started)', async () => {
    await stopEverything();
    const first = await call('evh__echo', { message: 'x' });
    expect(textOf(first)).toMatch(/^upstream_unavailable: /);
    await until(async () => (await view('evh')).health.status === 'down', 5000, 'down');
    const started = Date.now();
    expect(textOf(await call('evh__echo', { message: 'x' }))).toMatch(/^upstream_unavailable: upstream 'evh' is down/);
    expect(Date.now() - started).toBeLessThan(2000);
    // A fresh start of the plugin while the server is away: down from the start, tools still listed as approved.
    await u.ok('POST', 'upstreams/evh/disable');
    await u.ok('POST', 'upstreams/evh/enable');
    await until(async () => (await view('evh')).health.last_error !== null, 5000, 'a failed first connect');
    expect(textOf(await call('evh__echo', { message: 'x' }))).toMatch(/^upstream_unavailable/);
    await startEverything();
    await until(async () => !(await call('evh__echo', { message: 'back' })).isError, 15_000, 'the upstream back');
    expect((await view('evh')).health.status).toBe('connected');
  });
});

describe('server-filesystem over stdio', () => {
  it('a write is staged, the file unchanged until approval, then changed once; reads run at once', async () => {
    const file = join(dir, 'note.txt');
    await writeFile(file, 'before\n');
    await u.ok('POST', 'upstreams', {
      id: 'fs',
      transport: { kind: 'stdio', command: process.execPath, args: [FILESYSTEM, dir] },
    });
    expect(textOf(await call('fs__read_text_file', { path: file }))).toBe('before\n');
    const staged = await call('fs__write_file', { path: file, content: 'after\n' });
    const s = staged.structuredContent as { status: string; staged_id: string };
    expect(s.status).toBe('pending_approval');
    // A later call answered by the same server: a write sent to it before would have landed by now.
    expect(textOf(await call('fs__read_text_file', { path: file }))).toBe('before\n');
    expect(await readFile(file, 'utf8')).toBe('before\n');
    const done = await u.ok<StagedPayload>('POST', `staged/${s.staged_id}/confirm`);
    expect(done.status).toBe('confirmed');
    expect(await readFile(file, 'utf8')).toBe('after\n');
    await writeFile(file, 'changed by hand\n');
    expect((await u.w.admin('POST', `staged/${s.staged_id}/confirm`)).body).toMatchObject({
      ok: true,
      data: { status: 'confirmed' },
    });
    expect(await readFile(file, 'utf8')).toBe('changed by hand\n');
    const discarded = await call('fs__write_file', { path: file, content: 'never\n' });
    await u.ok('POST', `staged/${(discarded.structuredContent as { staged_id: string }).staged_id}/discard`);
    expect(await readFile(file, 'utf8')).toBe('changed by hand\n');
  });
});

describe('a second Gatehouse as an HTTP upstream', () => {
  it('speaks 2026-07-28 with a token from the vault; marked read, its own staging answers pass through unchanged', async () => {
    const remote = await startTestService();
    try {
      const { token } = await remote.createToken({ label: 'from the first gatehouse' });
      await u.w.svc.core.vault.set(clientTokenAccount('remote-site'), token);
      const d = await u.ok<UpstreamDetail>('POST', 'upstreams', {
        id: 'gh2',
        transport: { kind: 'http', url: remote.mcpUrl, token_keychain: 'remote-site' },
        read: ['pages_update'],
      });
      expect(d.health).toMatchObject({ status: 'connected', era: '2026', protocol: '2026-07-28' });
      expect(JSON.stringify(await u.ok('GET', 'upstreams/gh2'))).not.toContain(token);
      const listed = (await call('gh2__pages_list', {})).structuredContent as {
        pages: Array<{ id: number; version: number }>;
      };
      const page = listed.pages[0]!;
      const r = await call('gh2__pages_update', {
        id: page.id,
        title: 'Retitled from afar',
        expected_version: page.version,
      });
      expect(r.structuredContent).toMatchObject({
        status: 'pending_approval',
        staged_id: expect.stringMatching(/^stg_/),
      });
      const remoteStaged = await remote.dispatch('staged.list', {});
      expect(remoteStaged.ok && remoteStaged.data.map((s) => s.id)).toEqual([
        (r.structuredContent as { staged_id: string }).staged_id,
      ]);
      expect((await u.ok<StagedPayload[]>('GET', 'staged')).some((s) => s.tool === 'gh2__pages_update')).toBe(false);
    } finally {
      await remote.cleanup();
    }
  });
});
