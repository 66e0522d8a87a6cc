import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientPlanItem, ClientReportView } from '../../main/contract/clients.ts';
import type { UpstreamView } from '../../main/contract/upstreams.ts';
import { startUpstreamWorld, textOf, type UpstreamWorld } from '../plugins/upstream/upstream-world.ts';
import { clientHomes, CURSOR_MCP, SECRET, type ClientHome } from './client-homes.ts';

/** The console's actions (admin API `clients/...`): the same import, connect and restore, one server per import call. */
const home = clientHomes();
let u: UpstreamWorld;
let h: ClientHome;
beforeAll(async () => {
  h = await home();
  u = await startUpstreamWorld({ clientsPlace: h.place });
}, 120_000);
afterAll(async () => u?.stop());

describe('clients actions of the service API', () => {
  it('list, plan (names only), import one server, connect, restore', async () => {
    const reports = await u.ok<ClientReportView[]>('GET', 'clients');
    const cursor = reports.find((r) => r.client === 'cursor')!;
    expect(cursor.locations[0]!.servers.find((s) => s.name === 'everything')!.how).toMatchObject({
      kind: 'stdio',
      env_names: ['API_KEY', 'FROM_CLIENT'],
    });
    expect(JSON.stringify(reports)).not.toContain(SECRET);

    const plan = await u.ok<ClientPlanItem[]>('POST', 'clients/cursor/plan', { servers: ['everything'] });
    expect(plan).toEqual([expect.objectContaining({ server: 'everything', upstream: 'everything', skip: null })]);
    expect(JSON.stringify(plan)).not.toContain(SECRET);

    const done = await u.ok('POST', 'clients/cursor/import', { server: 'user:everything' });
    expect(done).toMatchObject({ phase: 'pinned', id: 'everything', tools: expect.any(Number) });
    const client = await u.mcp();
    expect(textOf(await client.callTool({ name: 'everything__get-sum', arguments: { a: 1, b: 1 } }))).toContain('2');
    await client.close();

    const c = await u.ok<{ files: Array<{ removed: string[] }> }>('POST', 'clients/cursor/connect', {});
    expect(c.files[0]!.removed).toEqual(['everything']);
    const target = join(h.home, 'dotfiles/cursor-mcp.json');
    expect(await readFile(target, 'utf8')).toContain('"gatehouse"');
    const r = await u.ok<Array<{ how: string }>>('POST', 'clients/cursor/restore', {});
    expect(r.map((x) => x.how)).toEqual(['bytes']);
    expect(await readFile(target, 'utf8')).toBe(CURSOR_MCP);
  }, 120_000);

  it('the plan carries each stdio server’s suggested sandbox; an import takes the person’s grants for that server, checked before it runs', async () => {
    const plan = await u.ok<ClientPlanItem[]>('POST', 'clients/cursor/plan', {
      servers: ['also-everything', 'old-sse'],
    });
    expect(plan.find((p) => p.server === 'also-everything')!.sandbox).toEqual({ unconfined: false, grants: [] });
    expect(plan.find((p) => p.server === 'old-sse')!.sandbox).toBeNull();

    const bad = await u.w.admin('POST', 'clients/cursor/import', {
      server: 'also-everything',
      sandbox: { write: ['notes'] },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('a granted folder is an absolute path');
    const remote = await u.w.admin('POST', 'clients/cursor/import', {
      server: 'old-sse',
      sandbox: { net: ['api.example.com'] },
    });
    expect(remote.status).toBe(400);
    expect((remote.body as { message: string }).message).toContain(
      '"old-sse" is not a stdio server this import starts',
    );
    const ids = (await u.ok<Array<{ id: string }>>('GET', 'upstreams')).map((x) => x.id);
    expect(ids).not.toContain('also-everything');
    expect(ids).not.toContain('old-sse');

    const done = await u.ok('POST', 'clients/cursor/import', {
      server: 'also-everything',
      sandbox: { read: [h.home], net: ['api.example.com'] },
    });
    expect(done).toMatchObject({ phase: 'pinned', id: 'also-everything' });
    const up = await u.ok<UpstreamView>('GET', 'upstreams/also-everything');
    expect(up.confinement?.grants).toEqual([
      { kind: 'read', value: h.home, from: 'person' },
      { kind: 'net', value: 'api.example.com', from: 'person' },
    ]);
  }, 120_000);

  it('a client token may not use them', async () => {
    const res = await fetch(`${u.w.svc.baseUrl}/wp-json/gatehouse/v1/admin/clients`, {
      headers: { Authorization: `Bearer ${u.token}` },
    });
    expect(res.status).toBe(403);
  });
});
