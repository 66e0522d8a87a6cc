import { describe, expect, it } from 'vitest';
import { SNIPPET_CLIENTS, snippetFor, suggestAccount } from '../../renderer/screens/tokens/snippets.ts';
import { bridgeLaunchArgs, MCP_CLIENTS, quotePosix } from '../../main/contract/client-config.ts';
import { defaultDataDir } from '../../main/contract/paths.ts';
import { parseCommand } from '../../bridge/args.ts';
import { runConfig } from '../../bridge/config/command.ts';

const token = `gth_${'x'.repeat(43)}`;
// What the service reports in its health report: an absolute node and script, never a bare `gatehouse-bridge`.
const launch = {
  command: '/usr/local/bin/node',
  args: ['/home/ada/gatehouse/bin/gatehouse-bridge.mjs', '--data-dir', '/srv/gh data'],
  platform: 'linux',
};

describe('client snippets', () => {
  it('every JSON snippet is valid JSON that starts the bridge the way the service says it starts here', () => {
    for (const client of SNIPPET_CLIENTS.filter((c) => c !== 'claude-code')) {
      for (const keychainAccount of [undefined, 'my laptop']) {
        const parsed = JSON.parse(snippetFor(client, { token, keychainAccount, launch }).text) as Record<
          string,
          Record<string, { command: string; args: string[] }>
        >;
        const server = (parsed.mcpServers ?? parsed.servers)!.gatehouse!;
        expect(server.command).toBe('/usr/local/bin/node');
        expect(server.args).toEqual([
          ...launch.args,
          ...(keychainAccount ? ['--token-keychain', keychainAccount] : ['--token-env', 'GATEHOUSE_TOKEN']),
        ]);
      }
    }
  });

  it('keeps the token out of configs that use the keychain, and out of VS Code configs altogether', () => {
    for (const client of SNIPPET_CLIENTS) {
      const withKeychain = snippetFor(client, { token, keychainAccount: 'acct', launch });
      expect(withKeychain.text).not.toContain(token);
      expect(withKeychain.containsToken).toBe(false);
    }
    const vscode = snippetFor('vscode', { token, launch });
    expect(vscode.text).not.toContain(token);
    expect(JSON.parse(vscode.text).inputs).toEqual([
      { type: 'promptString', id: 'gatehouse-token', description: 'Gatehouse token', password: true },
    ]);
    expect(JSON.parse(vscode.text).servers.gatehouse.env).toEqual({ GATEHOUSE_TOKEN: '${input:gatehouse-token}' });
    const cursor = snippetFor('cursor', { token, launch });
    expect(cursor.containsToken).toBe(true);
    expect(JSON.parse(cursor.text).mcpServers.gatehouse.env).toEqual({ GATEHOUSE_TOKEN: token });
  });

  it('builds a claude mcp add command (user scope, as the writer) with safe shell quoting', () => {
    expect(snippetFor('claude-code', { token, keychainAccount: "bob's mac", launch }).text).toBe(
      "claude mcp add --scope user gatehouse -- /usr/local/bin/node /home/ada/gatehouse/bin/gatehouse-bridge.mjs --data-dir '/srv/gh data' --token-keychain 'bob'\\''s mac'",
    );
    expect(snippetFor('claude-code', { token, launch }).text).toBe(
      `claude mcp add --scope user gatehouse -e GATEHOUSE_TOKEN=${token} -- /usr/local/bin/node /home/ada/gatehouse/bin/gatehouse-bridge.mjs --data-dir '/srv/gh data' --token-env GATEHOUSE_TOKEN`,
    );
    expect(quotePosix('$(rm -rf ~)')).toBe("'$(rm -rf ~)'");
  });

  it('is, for every client the writer knows, exactly what `gatehouse-bridge config` prints for the same token and vault', async () => {
    expect(SNIPPET_CLIENTS).toEqual(MCP_CLIENTS);
    const home = '/home/ada';
    const env = { GATEHOUSE_TOKEN: token };
    const dataDir = '/srv/gh data';
    // The service's launch line for a data dir that is not the default (main/bridge-launch.ts), as the health report carries it.
    const served = {
      command: '/usr/local/bin/node',
      args: bridgeLaunchArgs('/opt/gh/bin/gatehouse-bridge.mjs', {
        dataDir,
        defaultDataDir: defaultDataDir('linux', env, home),
      }),
      platform: 'linux',
    };
    const cases = [
      {
        flags: ['--token-keychain', 'acct', '--vault', 'file'],
        input: { keychainAccount: 'acct', vault: 'file' as const },
      },
      { flags: ['--token-keychain', 'acct'], input: { keychainAccount: 'acct', vault: 'keychain' as const } },
      { flags: ['--token-env', 'GATEHOUSE_TOKEN'], input: { vault: 'file' as const } },
    ];
    for (const client of MCP_CLIENTS) {
      for (const c of cases) {
        const printed: string[] = [];
        const io = {
          out: (t: string) => printed.push(t),
          err: () => {},
          env,
          platform: 'linux',
          home,
          cwd: '/',
          nodePath: served.command,
          binPath: '/opt/gh/bin/gatehouse-bridge.mjs',
        };
        const code = await runConfig(
          parseCommand(['config', '--client', client, '--data-dir', dataDir, ...c.flags]) as Parameters<
            typeof runConfig
          >[0],
          io,
        );
        expect(code).toBe(0);
        expect(snippetFor(client, { token, launch: served, ...c.input }).text, `${client} ${c.flags.join(' ')}`).toBe(
          printed.join('').trimEnd(),
        );
      }
    }
  });

  it('suggests a keychain account from the label', () => {
    expect(suggestAccount('Claude Desktop on Laptop!')).toBe('claude-desktop-on-laptop');
    expect(suggestAccount('***')).toBe('gatehouse');
  });
});
