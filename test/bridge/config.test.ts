import { spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { parse as parseJsonc } from 'jsonc-parser';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_FILES } from '../../bridge/config/clients.ts';
import { claudeMcpAddCommand, clientEntry } from '../../main/contract/client-config.ts';
import { startTestService } from '../helpers/service.ts';
import { BIN, ensureBundle } from './helpers/bundle.ts';
import { tinyServer } from './helpers/tiny-server.ts';

// `gatehouse-bridge config`: the printed snippets, and --write on real files
// in a throwaway home folder.

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});
beforeAll(ensureBundle);

function tempHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'gh-bridge-home-'));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  return home;
}

function config(args: string[], home: string, extraEnv: Record<string, string> = {}, cwd?: string) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    USERPROFILE: home,
    APPDATA: join(home, 'AppData', 'Roaming'),
    ...extraEnv,
  };
  delete env.XDG_CONFIG_HOME;
  if (!('GATEHOUSE_DATA_DIR' in extraEnv)) delete env.GATEHOUSE_DATA_DIR;
  const r = spawnSync(process.execPath, [BIN, 'config', ...args], {
    encoding: 'utf8',
    env,
    timeout: 20_000,
    ...(cwd ? { cwd } : {}),
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const realBin = realpathSync(BIN);

describe('printing', () => {
  it('claude-desktop: an mcpServers snippet with absolute node and script paths and the flags', () => {
    const r = config(
      [
        '--client',
        'claude-desktop',
        '--token-keychain',
        'claude-desktop',
        '--url',
        'http://127.0.0.1:8765/wp-json/gatehouse-mcp/v1/mcp',
      ],
      tempHome(),
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({
      mcpServers: {
        gatehouse: {
          command: process.execPath,
          args: [
            realBin,
            '--url',
            'http://127.0.0.1:8765/wp-json/gatehouse-mcp/v1/mcp',
            '--token-keychain',
            'claude-desktop',
          ],
        },
      },
    });
    expect(r.err).toContain('claude_desktop_config.json');
  });

  it('vscode with --token-env: a stdio entry whose token comes from a password prompt (inputs), nothing secret stored', () => {
    const r = config(['--client', 'vscode', '--name', 'gh', '--token-env', 'GH_TOKEN'], tempHome());
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({
      inputs: [{ type: 'promptString', id: 'gatehouse-token', description: 'Gatehouse token', password: true }],
      servers: {
        gh: {
          type: 'stdio',
          command: process.execPath,
          args: [realBin, '--token-env', 'GH_TOKEN'],
          env: { GH_TOKEN: '${input:gatehouse-token}' },
        },
      },
    });
    expect(r.err).toContain('password prompt');
  });

  it('--token-env for a client that cannot prompt: refused clearly unless the token is at hand, then carried in "env"', () => {
    const refused = config(['--client', 'claude-desktop', '--token-env', 'GH_TOKEN'], tempHome());
    expect(refused.code).toBe(2);
    expect(refused.out).toBe('');
    expect(refused.err).toContain('Claude Desktop starts its servers with its own environment');
    expect(refused.err).toContain('--token-keychain');
    const token = `gth_${'A'.repeat(43)}`;
    const r = config(['--client', 'claude-desktop', '--token-env', 'GH_TOKEN'], tempHome(), { GH_TOKEN: token });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).mcpServers.gatehouse).toEqual({
      command: process.execPath,
      args: [realBin, '--token-env', 'GH_TOKEN'],
      env: { GH_TOKEN: token },
    });
    expect(r.err).toContain('holds the token');
  });

  it('carries a non-default data dir (flag or GATEHOUSE_DATA_DIR, made absolute) into the entry', () => {
    const home = tempHome();
    const fromEnv = config(['--client', 'cursor', '--token-keychain', 'c'], home, {
      GATEHOUSE_DATA_DIR: '/srv/gatehouse data',
    });
    expect(JSON.parse(fromEnv.out).mcpServers.gatehouse.args).toEqual([
      realBin,
      '--data-dir',
      '/srv/gatehouse data',
      '--token-keychain',
      'c',
    ]);
    const relative = config(
      ['--client', 'cursor', '--data-dir', 'gh-data', '--log-file', 'logs/b.log'],
      home,
      {},
      home,
    );
    expect(JSON.parse(relative.out).mcpServers.gatehouse.args).toEqual([
      realBin,
      '--data-dir',
      join(realpathSync(home), 'gh-data'),
      '--log-file',
      join(realpathSync(home), 'logs', 'b.log'),
    ]);
    const plain = config(['--client', 'cursor'], home);
    expect(JSON.parse(plain.out).mcpServers.gatehouse.args).toEqual([realBin]);
  });

  it('claude-code: the `claude mcp add` command', () => {
    const r = config(['--client', 'claude-code', '--token-keychain', 'cc'], tempHome());
    expect(r.code).toBe(0);
    const e = clientEntry(
      'claude-code',
      { command: process.execPath, args: [realBin], platform: process.platform },
      { kind: 'keychain', account: 'cc' },
    );
    expect(r.out.trim()).toBe(claudeMcpAddCommand('gatehouse', e, process.platform));
    expect(r.out).toMatch(/^claude mcp add --scope user gatehouse -- /);
  });

  it('warns when a --header value would be stored as given', () => {
    const r = config(['--client', 'cursor', '--header', 'X-Api-Key: literal-secret'], tempHome());
    expect(r.code).toBe(0);
    expect(r.err).toContain("will be stored in Cursor's config file as given");
    expect(config(['--client', 'cursor', '--header', 'X-Api-Key: ${KEY}'], tempHome()).err).not.toContain('as given');
  });
});

describe('--write', () => {
  const existing = {
    globalShortcut: 'Ctrl+Space',
    mcpServers: {
      filesystem: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'] },
      other: { command: '/usr/bin/other', env: { A: '1' } },
    },
    preferences: { theme: 'dark' },
  };

  it('adds the entry beside the others, keeps a timestamped backup, and is idempotent', () => {
    const home = tempHome();
    const file = join(home, '.config', 'Claude', 'claude_desktop_config.json');
    mkdirSync(dirname(file), { recursive: true });
    const original = `${JSON.stringify(existing, null, 2)}\n`;
    writeFileSync(file, original, { mode: 0o640 });

    const first = config(['--client', 'claude-desktop', '--write', '--token-keychain', 'claude-desktop'], home);
    expect(first.code).toBe(0);
    expect(first.out).toContain(`added "gatehouse" in ${file}`);
    const written = JSON.parse(readFileSync(file, 'utf8'));
    expect(written).toEqual({
      ...existing,
      mcpServers: {
        ...existing.mcpServers,
        gatehouse: { command: process.execPath, args: [realBin, '--token-keychain', 'claude-desktop'] },
      },
    });
    expect(Object.keys(written)).toEqual(['globalShortcut', 'mcpServers', 'preferences']);
    expect(statSync(file).mode & 0o777).toBe(0o640);
    const backups = readdirSync(dirname(file)).filter((f) =>
      /^claude_desktop_config\.json\.\d{8}-\d{6}(-\d+)?\.bak$/.test(f),
    );
    expect(backups).toHaveLength(1);
    expect(readFileSync(join(dirname(file), backups[0]!), 'utf8')).toBe(original);

    const afterFirst = readFileSync(file, 'utf8');
    const second = config(['--client', 'claude-desktop', '--write', '--token-keychain', 'claude-desktop'], home);
    expect(second.code).toBe(0);
    expect(second.out).toContain('nothing changed');
    expect(readFileSync(file, 'utf8')).toBe(afterFirst);
    expect(readdirSync(dirname(file)).filter((f) => f.endsWith('.bak'))).toHaveLength(1);

    // Other flags replace this entry only.
    const third = config(['--client', 'claude-desktop', '--write', '--token-keychain', 'other'], home);
    expect(third.out).toContain('updated "gatehouse"');
    expect(JSON.parse(readFileSync(file, 'utf8')).mcpServers.gatehouse.args).toEqual([
      realBin,
      '--token-keychain',
      'other',
    ]);
    expect(JSON.parse(readFileSync(file, 'utf8')).mcpServers.filesystem).toEqual(existing.mcpServers.filesystem);
  });

  it('refuses a file that is not JSON or JSONC and leaves it untouched (exit 4)', () => {
    const home = tempHome();
    const file = join(home, '.cursor', 'mcp.json');
    mkdirSync(dirname(file), { recursive: true });
    const broken = '{\n  "mcpServers": { "a": { "command": "x" } \n';
    writeFileSync(file, broken);
    const r = config(['--client', 'cursor', '--write'], home);
    expect(r.code).toBe(4);
    expect(r.err).toMatch(/mcp\.json is not valid JSON or JSONC .*line \d+.*left untouched/);
    expect(readFileSync(file, 'utf8')).toBe(broken);
    expect(readdirSync(dirname(file))).toEqual(['mcp.json']);
  });

  it('reads JSONC (comments, trailing commas) and keeps the comments when it writes; VS Code gets its password input', () => {
    const home = tempHome();
    const file = join(home, '.config', 'Code', 'User', 'mcp.json');
    mkdirSync(dirname(file), { recursive: true });
    const jsonc =
      '{\n\t// my servers\n\t"servers": {\n\t\t/* the filesystem one */\n\t\t"fs": { "type": "stdio", "command": "npx", "args": ["fs"] },\n\t},\n}\n';
    writeFileSync(file, jsonc);
    const r = config(['--client', 'vscode', '--write', '--token-env', 'GATEHOUSE_TOKEN'], home);
    expect(r.code, r.err).toBe(0);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('// my servers');
    expect(text).toContain('/* the filesystem one */');
    expect(text).toContain('\t\t"fs": { "type": "stdio", "command": "npx", "args": ["fs"] },');
    const written = parseJsonc(text);
    expect(written.servers.fs).toEqual({ type: 'stdio', command: 'npx', args: ['fs'] });
    expect(written.servers.gatehouse).toEqual({
      type: 'stdio',
      command: process.execPath,
      args: [realBin, '--token-env', 'GATEHOUSE_TOKEN'],
      env: { GATEHOUSE_TOKEN: '${input:gatehouse-token}' },
    });
    expect(written.inputs).toEqual([
      { type: 'promptString', id: 'gatehouse-token', description: 'Gatehouse token', password: true },
    ]);
    // and again: nothing to change
    const again = config(['--client', 'vscode', '--write', '--token-env', 'GATEHOUSE_TOKEN'], home);
    expect(again.out).toContain('nothing changed');
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('an entry written with a non-default data dir finds the token the service saved there', async () => {
    const svc = await startTestService();
    cleanups.push(() => svc.cleanup());
    await svc.createToken({ label: 'data dir', keychain_account: 'dd-client' });
    const home = tempHome();
    const file = join(home, 'mcp.json');
    const r = config(
      ['--client', 'cursor', '--write', '--config-file', file, '--token-keychain', 'dd-client', '--vault', 'file'],
      home,
      { GATEHOUSE_DATA_DIR: svc.dataDir },
    );
    expect(r.code, r.err).toBe(0);
    const entry = JSON.parse(readFileSync(file, 'utf8')).mcpServers.gatehouse as { command: string; args: string[] };
    expect(entry.args).toContain(svc.dataDir);
    // The client starts it without GATEHOUSE_DATA_DIR in its environment.
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([k, v]) => k !== 'GATEHOUSE_DATA_DIR' && v !== undefined),
    ) as Record<string, string>;
    const client = new Client({ name: 'config-test', version: '1' }, { capabilities: {} });
    await client.connect(
      new StdioClientTransport({
        command: entry.command,
        args: entry.args,
        env: { ...env, HOME: home },
        stderr: 'pipe',
      }),
    );
    cleanups.push(() => client.close());
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('pages_list');
  });

  it('creates the file (and folders) when the client has none yet', () => {
    const home = tempHome();
    const r = config(['--client', 'windsurf', '--write'], home);
    expect(r.code).toBe(0);
    const file = join(home, '.codeium', 'windsurf', 'mcp_config.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      mcpServers: { gatehouse: { command: process.execPath, args: [realBin] } },
    });
  });

  it('writes to a path with spaces, and the written entry starts a working bridge without a shell', async () => {
    const server = await tinyServer();
    cleanups.push(() => server.stop());
    const home = tempHome();
    const file = join(home, 'My Settings', 'VS Code', 'mcp.json');
    const r = config(
      ['--client', 'vscode', '--write', '--config-file', file, '--url', server.url, '--name', 'gatehouse-local'],
      home,
    );
    expect(r.code).toBe(0);
    const entry = JSON.parse(readFileSync(file, 'utf8')).servers['gatehouse-local'] as {
      command: string;
      args: string[];
    };
    const client = new Client({ name: 'config-test', version: '1' }, { capabilities: {} });
    await client.connect(new StdioClientTransport({ command: entry.command, args: entry.args, stderr: 'pipe' }));
    cleanups.push(() => client.close());
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo');
  });
});

describe('config file locations', () => {
  const env = { APPDATA: 'C:\\Users\\Ada Lovelace\\AppData\\Roaming' };
  it.each([
    [
      'claude-desktop',
      'darwin',
      '/Users/ada',
      '/Users/ada/Library/Application Support/Claude/claude_desktop_config.json',
    ],
    [
      'claude-desktop',
      'win32',
      'C:\\Users\\Ada Lovelace',
      'C:\\Users\\Ada Lovelace\\AppData\\Roaming\\Claude\\claude_desktop_config.json',
    ],
    ['claude-desktop', 'linux', '/home/ada', '/home/ada/.config/Claude/claude_desktop_config.json'],
    ['cursor', 'win32', 'C:\\Users\\Ada Lovelace', 'C:\\Users\\Ada Lovelace\\.cursor\\mcp.json'],
    ['vscode', 'darwin', '/Users/ada', '/Users/ada/Library/Application Support/Code/User/mcp.json'],
    ['vscode', 'win32', 'C:\\Users\\Ada Lovelace', 'C:\\Users\\Ada Lovelace\\AppData\\Roaming\\Code\\User\\mcp.json'],
    ['vscode', 'linux', '/home/ada', '/home/ada/.config/Code/User/mcp.json'],
    ['windsurf', 'linux', '/home/ada', '/home/ada/.codeium/windsurf/mcp_config.json'],
    ['claude-code', 'darwin', '/Users/ada', '/Users/ada/.claude.json'],
  ] as const)('%s on %s', (client, platform, home, expected) => {
    expect(CLIENT_FILES[client](platform, platform === 'win32' ? env : {}, home)).toBe(expected);
  });

  it('quotes paths with spaces in the claude mcp add command for each platform', () => {
    const entry = (command: string, args: string[]) => ({ entry: { command, args }, containsToken: false });
    expect(
      claudeMcpAddCommand(
        'gh',
        entry('C:\\Program Files\\nodejs\\node.exe', ['C:\\Users\\Ada Lovelace\\gatehouse\\bin\\gatehouse-bridge.mjs']),
        'win32',
      ),
    ).toBe(
      'claude mcp add --scope user gh -- "C:\\Program Files\\nodejs\\node.exe" "C:\\Users\\Ada Lovelace\\gatehouse\\bin\\gatehouse-bridge.mjs"',
    );
    expect(
      claudeMcpAddCommand(
        'gh',
        entry('/usr/bin/node', ["/home/o'neil/my apps/gatehouse-bridge.mjs", '--header', 'X-Key: ${KEY}']),
        'linux',
      ),
    ).toBe(
      `claude mcp add --scope user gh -- /usr/bin/node '/home/o'\\''neil/my apps/gatehouse-bridge.mjs' --header 'X-Key: \${KEY}'`,
    );
  });
});

describe('--remote entries (a remote MCP server through the Gatehouse service)', () => {
  const remote = 'https://mcp.linear.app/mcp';

  it("prints the entry for each client under a name of the remote, with the bridge's own token source and no header", () => {
    const home = tempHome();
    const desktop = config(['--client', 'claude-desktop', '--remote', remote, '--token-keychain', 'bridge'], home);
    expect(desktop.code, desktop.err).toBe(0);
    expect(JSON.parse(desktop.out)).toEqual({
      mcpServers: {
        'gatehouse-mcp-linear-app': {
          command: process.execPath,
          args: [realBin, '--remote', remote, '--token-keychain', 'bridge'],
        },
      },
    });
    expect(desktop.err).toContain(`gatehouse upstreams add ID --url ${remote} --oauth`);
    const cursor = config(
      ['--client', 'cursor', '--remote', remote, '--token-keychain', 'bridge', '--name', 'linear'],
      home,
    );
    expect(JSON.parse(cursor.out).mcpServers.linear.args).toEqual([
      realBin,
      '--remote',
      remote,
      '--token-keychain',
      'bridge',
    ]);
    const code = config(['--client', 'claude-code', '--remote', remote, '--token-keychain', 'bridge'], home);
    const e = clientEntry(
      'claude-code',
      { command: process.execPath, args: [realBin], platform: process.platform },
      { kind: 'keychain', account: 'bridge' },
      ['--remote', remote],
    );
    expect(code.out.trim()).toBe(claudeMcpAddCommand('gatehouse-mcp-linear-app', e, process.platform));
    expect(code.out).toContain(`--remote ${remote} --token-keychain bridge`);
  });

  it('--write puts the remote beside the main entry (VS Code: the token from a password prompt)', () => {
    const home = tempHome();
    const file = join(home, '.config', 'Code', 'User', 'mcp.json');
    expect(config(['--client', 'vscode', '--write', '--token-env', 'GATEHOUSE_TOKEN'], home).code).toBe(0);
    const r = config(['--client', 'vscode', '--write', '--remote', remote, '--token-env', 'GATEHOUSE_TOKEN'], home);
    expect(r.code, r.err).toBe(0);
    const written = parseJsonc(readFileSync(file, 'utf8'));
    expect(Object.keys(written.servers)).toEqual(['gatehouse', 'gatehouse-mcp-linear-app']);
    expect(written.servers['gatehouse-mcp-linear-app']).toEqual({
      type: 'stdio',
      command: process.execPath,
      args: [realBin, '--remote', remote, '--token-env', 'GATEHOUSE_TOKEN'],
      env: { GATEHOUSE_TOKEN: '${input:gatehouse-token}' },
    });
    expect(
      config(['--client', 'vscode', '--write', '--remote', remote, '--token-env', 'GATEHOUSE_TOKEN'], home).out,
    ).toContain('nothing changed');
  });

  it("refuses what would put a remote's credential in the config, or could not work", () => {
    const home = tempHome();
    const header = config(
      [
        '--client',
        'cursor',
        '--remote',
        remote,
        '--token-keychain',
        'b',
        '--header',
        'Authorization: Bearer lin_api_secret',
      ],
      home,
    );
    expect([header.code, header.out]).toEqual([2, '']);
    expect(header.err).toContain('belong to its upstream in Gatehouse');
    expect(header.err).not.toContain('lin_api_secret');
    const noToken = config(['--client', 'cursor', '--remote', remote], home);
    expect([noToken.code, noToken.err.includes("--remote needs this bridge's Gatehouse token")]).toEqual([2, true]);
    const both = config(
      ['--client', 'cursor', '--remote', remote, '--url', 'http://127.0.0.1:1/mcp', '--token-keychain', 'b'],
      home,
    );
    expect([both.code, both.err.includes('not both')]).toEqual([2, true]);
    const bad = config(['--client', 'cursor', '--remote', 'javascript:alert(1)', '--token-keychain', 'b'], home);
    expect([bad.code, bad.err.includes('--remote must be http:// or https://')]).toEqual([2, true]);
  });
});
