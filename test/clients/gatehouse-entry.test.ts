import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { parse as parseToml } from 'smol-toml';
import { afterAll, describe, expect, it } from 'vitest';
import type { ApiDispatch } from '../../main/contract/api.ts';
import { clientLocations, type ClientId } from '../../main/contract/client-locations.ts';
import { updateState } from '../../main/clients/clients-state.ts';
import { connectClient } from '../../main/clients/connect.ts';
import { valueAt } from '../../main/clients/config-file.ts';
import { restoreClient } from '../../main/clients/restore.ts';
import { clientHomes } from './client-homes.ts';

/**
 * Every client's Gatehouse entry, in its own key and type value, at the place
 * its servers were, on each client's realistic file; and restore giving the
 * bytes back. The service's side (a token, the upstream list) is a stand-in
 * here: the import and the entries a real client drives are in
 * import.test.ts and connect.test.ts.
 */
const home = clientHomes();
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const TOKEN = `gth_${'A'.repeat(43)}`;
const URL = 'http://127.0.0.1:7823/wp-json/gatehouse-mcp/v1/mcp';
const AUTH = { Authorization: `Bearer ${TOKEN}` };

function standIn(ids: string[], revoked: string[]): ApiDispatch {
  return (async (action: string, input: { id?: string }) => {
    if (action === 'upstreams.list') return { ok: true, data: ids.map((id) => ({ id })) };
    if (action === 'tokens.create') return { ok: true, data: { token: TOKEN, record: { id: 'tok-1' } } };
    if (action === 'tokens.revoke') return (revoked.push(input.id!), { ok: true, data: { id: input.id } });
    throw new Error(`unexpected ${action}`);
  }) as unknown as ApiDispatch;
}

const CASES: Array<{ client: ClientId; imported: Array<[scope: string, name: string]>; entry: unknown }> = [
  {
    client: 'claude-code',
    imported: [
      ['user', 'remote'],
      ['local', 'localonly'],
    ],
    entry: { type: 'http', url: URL, headers: AUTH },
  },
  { client: 'vscode', imported: [['user', 'github']], entry: { type: 'http', url: URL, headers: AUTH } },
  { client: 'cursor', imported: [['user', 'everything']], entry: { url: URL, headers: AUTH } },
  { client: 'windsurf', imported: [['user', 'linear']], entry: { serverUrl: URL, headers: AUTH } },
  { client: 'gemini', imported: [['user', 'stream']], entry: { httpUrl: URL, headers: AUTH } },
  { client: 'zed', imported: [['user', 'new-style']], entry: { url: URL, headers: AUTH } },
  { client: 'codex', imported: [['user', 'everything']], entry: { url: URL, http_headers: AUTH } },
];

describe("each client's Gatehouse entry", () => {
  it.each(CASES)(
    '$client: its own key and type value, the other servers untouched, restore byte for byte',
    async (c) => {
      const h = await home();
      const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-clients-data-'));
      dirs.push(dataDir);
      const locations = clientLocations(c.client, h.place);
      await updateState(dataDir, (s) => {
        for (const [scope, name] of c.imported) {
          const l = locations.find((x) => x.scope === scope)!;
          s.imports.push({
            client: c.client,
            scope: l.scope,
            file: l.file,
            path: l.path,
            name,
            upstream: name,
            at: '',
          });
        }
      });
      const file = locations[0]!.file;
      const before = await readFile(file, 'utf8');
      const parse = (t: string) => (c.client === 'codex' ? parseToml(t) : parseJsonc(t)) as Record<string, unknown>;
      const revoked: string[] = [];
      const deps = {
        dataDir,
        dispatch: standIn(
          c.imported.map(([, n]) => n),
          revoked,
        ),
        place: h.place,
        mcpUrl: URL,
        launch: { command: '/usr/bin/node', args: ['/opt/gh/bin/gatehouse-bridge.mjs'], platform: 'linux' },
        vault: 'auto' as const,
      };
      const r = await connectClient(c.client, deps);
      expect(r.files.map((f) => f.file)).toEqual([file]);
      const after = parse(await readFile(file, 'utf8'));
      const old = parse(before);
      for (const [scope] of c.imported) {
        const path = locations.find((x) => x.scope === scope)!.path;
        const servers = valueAt(after, path) as Record<string, unknown>;
        expect(servers.gatehouse).toEqual(c.entry);
        // Every server that was not imported is as it was; the imported ones are gone.
        const was = valueAt(old, path) as Record<string, unknown>;
        for (const [name, value] of Object.entries(was))
          if (c.imported.some(([s, n]) => s === scope && n === name)) expect(servers[name]).toBeUndefined();
          else expect(servers[name]).toEqual(value);
      }
      // Keys outside the servers are the same.
      const outside = (d: Record<string, unknown>) => {
        const copy = structuredClone(d);
        delete copy[locations[0]!.path[0]!];
        delete copy.projects;
        return copy;
      };
      expect(outside(after)).toEqual(outside(old));

      const back = await restoreClient(c.client, deps);
      expect(back.map((b) => b.how)).toEqual(['bytes']);
      expect(await readFile(file, 'utf8')).toBe(before);
      expect(revoked).toEqual(['tok-1']);
    },
  );

  it('Claude Desktop gets the bridge with the keychain token, no token in the file', async () => {
    const h = await home();
    const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-clients-data-'));
    dirs.push(dataDir);
    const l = clientLocations('claude-desktop', h.place)[0]!;
    await updateState(
      dataDir,
      (s) =>
        void s.imports.push({
          client: 'claude-desktop',
          scope: 'user',
          file: l.file,
          path: l.path,
          name: 'everything',
          upstream: 'everything',
          at: '',
        }),
    );
    await connectClient('claude-desktop', {
      dataDir,
      dispatch: standIn(['everything'], []),
      place: h.place,
      mcpUrl: URL,
      launch: { command: '/usr/bin/node', args: ['/opt/gh/bin/gatehouse-bridge.mjs'], platform: 'linux' },
      vault: 'file',
    });
    const text = await readFile(l.file, 'utf8');
    expect(JSON.parse(text).mcpServers).toEqual({
      gatehouse: {
        command: '/usr/bin/node',
        args: ['/opt/gh/bin/gatehouse-bridge.mjs', '--token-keychain', 'clients-claude-desktop', '--vault', 'file'],
      },
    });
    expect(text).not.toContain(TOKEN);
  });
});
