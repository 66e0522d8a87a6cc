import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ApiDispatch } from '../../main/contract/api.ts';
import { updateState } from '../../main/clients/clients-state.ts';
import { connectClient } from '../../main/clients/connect.ts';
import { describe, expect, it } from 'vitest';
import { clientLocations } from '../../main/contract/client-locations.ts';
import { discoverAll, discoverClient, type ClientReport } from '../../main/clients/discover.ts';
import { clientHomes } from './client-homes.ts';

const home = clientHomes();
const none = () => null;

const server = (r: ClientReport, scope: string, name: string) =>
  r.locations.find((l) => l.scope === scope)?.servers.find((s) => s.name === name);

describe('clients list: what each client has', () => {
  it('finds every client, its scopes and its servers, with what stays in the client and why', async () => {
    const h = await home();
    const all = await discoverAll(h.place, none);
    const by = Object.fromEntries(all.map((r) => [r.client, r]));
    expect(all.map((r) => r.client)).toEqual([
      'claude-desktop',
      'claude-code',
      'cursor',
      'vscode',
      'windsurf',
      'codex',
      'gemini',
      'zed',
    ]);
    for (const r of all) expect(r.locations.every((l) => l.error === null)).toBe(true);

    // Claude Code: user and local scope in ~/.claude.json (only this project's), project .mcp.json; no managed file here.
    const cc = by['claude-code']!;
    expect(cc.locations.map((l) => l.scope)).toEqual(['user', 'local', 'project']);
    expect(server(cc, 'user', 'remote')!.spec).toEqual({
      kind: 'http',
      transport: 'streamable',
      url: 'https://mcp.example.com/mcp',
      headers: { 'X-Api-Key': expect.any(String) },
      oauth: false,
    });
    expect(server(cc, 'user', 'expanded')!.placeholders).toEqual(['${HOME}']);
    expect(server(cc, 'local', 'localonly')!.spec).toMatchObject({ kind: 'stdio', command: 'local-srv' });
    expect(cc.locations.flatMap((l) => l.servers.map((s) => s.name))).not.toContain('elsewhere');
    expect(server(cc, 'project', 'proj')!.spec).toMatchObject({ kind: 'http', transport: 'sse' });

    // Cursor through its symlink; the workspace-bound one stays, with the reason.
    const cursor = by.cursor!;
    expect(server(cursor, 'user', 'everything')!.spec).toMatchObject({
      kind: 'stdio',
      args: [expect.any(String), 'stdio'],
    });
    expect(server(cursor, 'user', 'everything')!.placeholders).toEqual(['${env:USER}']);
    expect(server(cursor, 'user', 'per-workspace')!.stays).toMatch(/\$\{workspaceFolder\}.*only the client/);
    expect(server(cursor, 'user', 'old-sse')!.spec).toMatchObject({ kind: 'http', transport: 'sse' });

    // VS Code (JSONC, tabs): an input placeholder is kept; workspace and envFile stay.
    const vs = by.vscode!;
    expect(server(vs, 'user', 'github')!.spec).toMatchObject({ headers: { Authorization: 'Bearer ${input:gh}' } });
    expect(server(vs, 'user', 'files')!.stays).toMatch(/workspaceFolder/);
    expect(server(vs, 'user', 'withenvfile')!.stays).toMatch(/envFile/);

    expect(server(by.windsurf!, 'user', 'linear')!.spec).toMatchObject({ url: 'https://mcp.linear.app/mcp' });
    expect(server(by.windsurf!, 'user', 'off')!.disabled).toBe(true);

    // Codex (TOML): a table with a subtable; env_vars from Codex's environment stays.
    expect(server(by.codex!, 'user', 'everything')!.spec).toMatchObject({
      kind: 'stdio',
      env: { API_KEY: expect.any(String) },
    });
    expect(server(by.codex!, 'user', 'github')!.stays).toMatch(/GITHUB_TOKEN.*env_vars/);

    // Gemini: httpUrl is Streamable HTTP, url is SSE, an oauth block signs in, a relative cwd stays.
    const g = by.gemini!;
    expect(server(g, 'user', 'stream')!.spec).toMatchObject({ transport: 'streamable', oauth: false });
    expect(server(g, 'user', 'legacy')!.spec).toMatchObject({ transport: 'sse' });
    expect(server(g, 'user', 'signin')!.spec).toMatchObject({ oauth: true });
    expect(server(g, 'user', 'relcwd')!.stays).toMatch(/cwd "\.\/tools" is relative/);

    // Zed: both the old nested command and the custom form.
    expect(server(by.zed!, 'user', 'old-style')!.spec).toMatchObject({
      kind: 'stdio',
      command: 'mcp-old',
      args: ['--x'],
    });
    expect(server(by.zed!, 'user', 'new-style')!.spec).toMatchObject({ kind: 'stdio', command: 'mcp-new' });
  });

  it("says which entries already go through Gatehouse: its endpoint, the bridge, or an import's upstream", async () => {
    const h = await home();
    const file = join(h.home, '.codeium/windsurf/mcp_config.json');
    await writeFile(
      file,
      JSON.stringify({
        mcpServers: {
          gatehouse: { serverUrl: 'http://127.0.0.1:7823/wp-json/gatehouse-mcp/v1/mcp' },
          viaBridge: {
            command: '/usr/bin/node',
            args: ['/opt/gatehouse/bin/gatehouse-bridge.mjs', '--token-keychain', 'x'],
          },
          linear: { serverUrl: 'https://mcp.linear.app/mcp' },
        },
      }),
    );
    const r = await discoverClient('windsurf', h.place, (_l, name) => (name === 'linear' ? 'linear' : null));
    const s = r.locations[0]!.servers;
    expect(s.map((x) => [x.name, x.gatehouse, x.imported_as])).toEqual([
      ['gatehouse', true, null],
      ['viaBridge', true, null],
      ['linear', false, 'linear'],
    ]);
  });

  it("Claude Code's managed file is listed as read-only, and connect leaves it alone, saying so", async () => {
    const h = await home();
    const place = { ...h.place, systemRoot: join(h.root, 'sys') };
    const managed = join(h.root, 'sys/etc/claude-code/managed-mcp.json');
    await mkdir(dirname(managed), { recursive: true });
    const text = JSON.stringify({ mcpServers: { corp: { type: 'http', url: 'https://corp.example.com/mcp' } } });
    await writeFile(managed, text);
    const r = await discoverClient('claude-code', place, none);
    expect(r.locations.find((l) => l.scope === 'managed')).toMatchObject({
      file: managed,
      readOnly: true,
      servers: [expect.objectContaining({ name: 'corp' })],
    });
    const dataDir = join(h.root, 'data');
    await updateState(
      dataDir,
      (s) =>
        void s.imports.push({
          client: 'claude-code',
          scope: 'managed',
          file: managed,
          path: ['mcpServers'],
          name: 'corp',
          upstream: 'corp',
          at: '',
        }),
    );
    const dispatch = (async (action: string) =>
      action === 'upstreams.list'
        ? { ok: true, data: [{ id: 'corp' }] }
        : { ok: true, data: { token: `gth_${'B'.repeat(43)}`, record: { id: 't' } } }) as unknown as ApiDispatch;
    const c = await connectClient('claude-code', {
      dataDir,
      dispatch,
      place,
      mcpUrl: 'http://127.0.0.1:1/mcp',
      launch: { command: 'node', args: [], platform: 'linux' },
      vault: 'file',
    });
    expect(c.files).toEqual([]);
    expect(c.skipped).toEqual([{ file: managed, why: 'it is managed by an administrator (read-only to Gatehouse)' }]);
    expect(await readFile(managed, 'utf8')).toBe(text);
  });

  it('a malformed file is one error naming the file and the line, quoting none of it', async () => {
    const h = await home();
    const gemini = join(h.home, '.gemini/settings.json');
    await writeFile(
      gemini,
      `{\n  "mcpServers": {\n    "a": { "command": "x", "env": { "K": "sekrit-zz" } }\n    "b": {}\n  }\n}\n`,
    );
    const codex = join(h.home, '.codex/config.toml');
    await writeFile(codex, `model = "o3"\n[mcp_servers.x]\ncommand = "sekrit-zz\n`);
    const g = await discoverClient('gemini', h.place, none);
    expect(g.locations[0]!.error).toMatch(
      new RegExp(`^${gemini} is not valid JSON or JSONC \\(CommaExpected on line 4\\)`),
    );
    expect(g.locations[0]!.error).not.toContain('sekrit');
    const c = await discoverClient('codex', h.place, none);
    expect(c.locations[0]!.error).toMatch(new RegExp(`^${codex} is not valid TOML \\(.* on line 3\\)`));
    expect(c.locations[0]!.error).not.toContain('sekrit');
  });

  it("knows each OS's files: Claude Desktop's MSIX copy, VS Code's folders, Claude Code's managed file", () => {
    const win = {
      platform: 'win32',
      env: { APPDATA: 'C:\\U\\AppData\\Roaming', LOCALAPPDATA: 'C:\\U\\AppData\\Local' },
      home: 'C:\\U',
      cwd: 'C:\\p',
    };
    expect(clientLocations('claude-desktop', win).map((l) => l.file)).toEqual([
      'C:\\U\\AppData\\Roaming\\Claude\\claude_desktop_config.json',
      'C:\\U\\AppData\\Local\\Packages\\Claude_pzs8sxrjxfjjc\\LocalCache\\Roaming\\Claude\\claude_desktop_config.json',
    ]);
    const mac = { platform: 'darwin', env: {}, home: '/Users/a', cwd: '/Users/a/p' };
    expect(clientLocations('vscode', mac)[0]!.file).toBe('/Users/a/Library/Application Support/Code/User/mcp.json');
    expect(clientLocations('zed', mac)[0]!.file).toBe('/Users/a/.config/zed/settings.json');
    const managed = clientLocations('claude-code', mac).find((l) => l.scope === 'managed')!;
    expect(managed).toMatchObject({ file: '/Library/Application Support/ClaudeCode/managed-mcp.json', readOnly: true });
    expect(clientLocations('codex', { ...mac, env: { CODEX_HOME: '/opt/codex' } })[0]!.file).toBe(
      '/opt/codex/config.toml',
    );
  });
});
