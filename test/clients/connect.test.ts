import { lstat, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { parse as parseJsonc } from 'jsonc-parser';
import { parse as parseToml } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient } from '../../main/clients/connect.ts';
import { readState } from '../../main/clients/clients-state.ts';
import { bridgeLaunchFor } from '../../main/bridge-launch.ts';
import { connectClient as mcpClient } from '../helpers/service.ts';
import { ensureBundle } from '../bridge/helpers/bundle.ts';
import { startUpstreamWorld, textOf, type UpstreamWorld } from '../plugins/upstream/upstream-world.ts';
import { clientHomes, CODEX_TOML, CURSOR_MCP, SECRET } from './client-homes.ts';
import { runClients } from './run-clients.ts';

/**
 * `gatehouse clients connect` and `restore` on realistic files: the imported
 * entries become one Gatehouse entry that a real MCP client can use, every
 * other byte stays, restore gives the bytes back, and a client's own later
 * edit survives a restore.
 */
let u: UpstreamWorld;
beforeAll(async () => {
  await ensureBundle();
  u = await startUpstreamWorld();
}, 120_000);
afterAll(async () => u?.stop());
const home = clientHomes();

async function ok(h: Awaited<ReturnType<ReturnType<typeof clientHomes>>>, args: string[]) {
  const r = await runClients(h, u.w.svc.dataDir, args);
  expect(r.code, `${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r;
}

/** The gateway's tools as a client holding `url` and `authorization` sees them, and one read call. */
async function driveHttp(url: string, authorization: string, tool: string) {
  expect(authorization).toMatch(/^Bearer gth_/);
  const c = await mcpClient(url, authorization.slice('Bearer '.length));
  try {
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names).toContain(tool);
    return textOf(await c.callTool({ name: tool, arguments: { a: 20, b: 22 } }));
  } finally {
    await c.close();
  }
}

describe('gatehouse clients connect and restore', () => {
  it('Cursor (JSONC through a symlink): imported entries become one HTTP entry a real client uses; the rest stays byte for byte; restore puts the bytes back', async () => {
    const h = await home();
    const link = join(h.home, '.cursor/mcp.json');
    const target = join(h.home, 'dotfiles/cursor-mcp.json');
    await ok(h, ['import', 'cursor', '--server', 'everything', '--server', 'also-everything', '--yes']);
    const r = await ok(h, ['connect', 'cursor']);
    expect(r.stdout).toContain(`${link}: everything, also-everything replaced by "gatehouse" (Gatehouse); backup: `);

    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    const text = await readFile(target, 'utf8');
    const doc = parseJsonc(text) as { mcpServers: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.mcpServers)).toEqual(['broken', 'per-workspace', 'old-sse', 'gatehouse']);
    const entry = doc.mcpServers.gatehouse as { url: string; headers: { Authorization: string } };
    expect(entry).toEqual({ url: u.w.svc.mcpUrl, headers: { Authorization: expect.stringMatching(/^Bearer gth_/) } });
    // Every other byte: the comment and the lines before the servers, the untouched entries, the unrelated key.
    const lines = CURSOR_MCP.split('\n');
    expect(text.startsWith(`${lines[0]}\n${lines[1]}\n${lines[2]}\n`)).toBe(true);
    expect(text).toContain('    "broken": { "command": "/nonexistent/bin/mcp-server-gone" },\n');
    expect(text.endsWith('  "unrelated": { "keep": [1, 2, 3] },\n}\n')).toBe(true);
    expect(text).not.toContain(SECRET);

    // The backup: the file as it was, 0600, in the data dir.
    const backups = await readdir(join(u.w.svc.dataDir, 'client-backups'));
    const mine = (await readState(u.w.svc.dataDir)).connections.find((c) => c.file === link)!;
    expect(backups).toContain(mine.backup.split('/').pop());
    expect((await stat(mine.backup)).mode & 0o777).toBe(0o600);
    expect(await readFile(mine.backup, 'utf8')).toBe(CURSOR_MCP);

    expect(await driveHttp(entry.url, entry.headers.Authorization, 'everything__get-sum')).toContain('42');

    const back = await ok(h, ['restore', 'cursor']);
    expect(back.stdout).toContain(`${link}: put back as it was before connect`);
    expect(await readFile(target, 'utf8')).toBe(CURSOR_MCP);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    // The token connect made is revoked with it.
    await expect(driveHttp(entry.url, entry.headers.Authorization, 'everything__get-sum')).rejects.toThrow();
  }, 120_000);

  it("Codex (TOML): one table spliced, comments and order kept; the client's own edit after connect survives restore", async () => {
    const h = await home();
    const file = join(h.home, '.codex/config.toml');
    await ok(h, ['import', 'codex', '--as', 'everything=codex-ev', '--yes']);
    await ok(h, ['connect', 'codex']);
    const text = await readFile(file, 'utf8');
    const doc = parseToml(text) as { mcp_servers: Record<string, Record<string, unknown>>; model: string };
    expect(Object.keys(doc.mcp_servers)).toEqual(['gatehouse', 'github']);
    const entry = doc.mcp_servers.gatehouse as { url: string; http_headers: { Authorization: string } };
    expect(entry.url).toBe(u.w.svc.mcpUrl);
    expect(text).toContain(
      '# Codex settings, with comments\nmodel = "o3"\napproval_policy = "on-request"\n\n[mcp_servers.gatehouse]\n',
    );
    expect(text).toContain(
      '\n\n# needs Codex\'s own environment: stays\n[mcp_servers.github]\ncommand = "github-mcp"\nenv_vars = ["GITHUB_TOKEN"]\n\n[profiles.fast]\nmodel = "o4-mini"\n',
    );
    expect(text).not.toContain(SECRET);
    expect(await driveHttp(entry.url, entry.http_headers.Authorization, 'codex-ev__get-sum')).toContain('42');

    // Codex rewrites its file: another model, a server of its own.
    const edited = text.replace('model = "o3"', 'model = "gpt-5"') + '\n[mcp_servers.added-later]\ncommand = "later"\n';
    await writeFile(file, edited);
    const back = await ok(h, ['restore', 'codex']);
    expect(back.stdout).toContain(`${file}: changed since connect; put back everything, Gatehouse's entry taken out`);
    const after = await readFile(file, 'utf8');
    const restored = parseToml(after) as { mcp_servers: Record<string, Record<string, unknown>>; model: string };
    expect(restored.model).toBe('gpt-5');
    expect(Object.keys(restored.mcp_servers).sort()).toEqual(['added-later', 'everything', 'github']);
    expect(restored.mcp_servers.everything).toEqual(
      (parseToml(CODEX_TOML) as { mcp_servers: Record<string, unknown> }).mcp_servers.everything,
    );
    // The original table's own text, comments and subtable included, is back as it was.
    expect(after).toContain(`[mcp_servers.everything.env]\nAPI_KEY = "${SECRET}"\n`);
  }, 120_000);

  it('Claude Desktop (stdio only): the bridge with a keychain token, driven by a real stdio client', async () => {
    const h = await home();
    const file = join(h.home, '.config/Claude/claude_desktop_config.json');
    const original = await readFile(file, 'utf8');
    await ok(h, ['import', 'claude-desktop', '--as', 'everything=desk-ev', '--yes']);
    await ok(h, ['connect', 'claude-desktop']);
    const doc = JSON.parse(await readFile(file, 'utf8')) as {
      mcpServers: Record<string, { command: string; args: string[] }>;
      preferences: unknown;
    };
    expect(doc.preferences).toEqual({ quickEntryShortcut: 'off' });
    const entry = doc.mcpServers.gatehouse!;
    expect(Object.keys(doc.mcpServers)).toEqual(['gatehouse']);
    expect(entry.args).toEqual(
      expect.arrayContaining(['--token-keychain', 'clients-claude-desktop', '--vault', 'file']),
    );
    expect(await readFile(file, 'utf8')).not.toMatch(/gth_/);
    const client = new Client({ name: 'claude-desktop-like', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: entry.command,
        args: entry.args,
        env: { ...(process.env as Record<string, string>), ...h.env } as Record<string, string>,
        stderr: 'pipe',
      }),
    );
    try {
      expect(textOf(await client.callTool({ name: 'desk-ev__get-sum', arguments: { a: 1, b: 41 } }))).toContain('42');
    } finally {
      await client.close();
    }
    await ok(h, ['restore', 'claude-desktop']);
    expect(await readFile(file, 'utf8')).toBe(original);
  }, 120_000);

  it('a file the client changes between read and write is refused, never overwritten; a malformed one names its line', async () => {
    const h = await home();
    const file = join(h.home, '.gemini/settings.json');
    await writeFile(
      file,
      `{\n  // Gemini\n  "mcpServers": { "ev": { "command": ${JSON.stringify(process.execPath)}, "args": [${JSON.stringify(join(import.meta.dirname, '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js'))}, "stdio"] } }\n}\n`,
    );
    await ok(h, ['import', 'gemini', '--as', 'ev=gem-ev', '--yes']);
    const deps = {
      dataDir: u.w.svc.dataDir,
      dispatch: u.w.svc.dispatch,
      place: h.place,
      mcpUrl: u.w.svc.mcpUrl,
      launch: bridgeLaunchFor(u.w.svc.dataDir),
      vault: 'file' as const,
    };
    const theirs = `{\n  // Gemini rewrote it\n  "mcpServers": {}\n}\n`;
    await expect(
      connectClient('gemini', { ...deps, beforeWrite: async () => writeFile(file, theirs) }),
    ).rejects.toThrow(`${file} changed while Gatehouse was changing it (its client rewrote it?); nothing was written`);
    expect(await readFile(file, 'utf8')).toBe(theirs);
    expect((await readState(u.w.svc.dataDir)).connections.filter((c) => c.client === 'gemini')).toEqual([]);

    await writeFile(file, `{\n  "mcpServers": {\n    "ev": { "command": "x" }\n    "y": 1\n}\n`);
    const bad = await runClients(h, u.w.svc.dataDir, ['connect', 'gemini']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`${file} is not valid JSON or JSONC (CommaExpected on line 4); nothing was changed`);
    expect(await readFile(file, 'utf8')).toBe(`{\n  "mcpServers": {\n    "ev": { "command": "x" }\n    "y": 1\n}\n`);
  }, 120_000);
});
