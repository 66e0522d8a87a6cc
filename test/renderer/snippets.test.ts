import { describe, expect, it } from 'vitest';
import { SNIPPET_CLIENTS, snippetFor, suggestAccount } from '../../renderer/screens/tokens/snippets.ts';
import { quotePosix } from '../../main/contract/client-config.ts';

const token = `gth_${'x'.repeat(43)}`;
// What the service reports in its health report: an absolute node and script, never a bare `gatehouse-bridge`.
const launch = { command: '/usr/local/bin/node', args: ['/home/ada/gatehouse/bin/gatehouse-bridge.mjs', '--data-dir', '/srv/gh data'], platform: 'linux' };

describe('client snippets', () => {
  it('every JSON snippet is valid JSON that starts the bridge the way the service says it starts here', () => {
    for (const client of SNIPPET_CLIENTS.filter((c) => c !== 'claude-code')) {
      for (const keychainAccount of [undefined, 'my laptop']) {
        const parsed = JSON.parse(snippetFor(client, { token, keychainAccount, launch }).text) as Record<string, Record<string, { command: string; args: string[] }>>;
        const server = (parsed.mcpServers ?? parsed.servers)!.gatehouse!;
        expect(server.command).toBe('/usr/local/bin/node');
        expect(server.args).toEqual([...launch.args, ...(keychainAccount ? ['--token-keychain', keychainAccount] : ['--token-env', 'GATEHOUSE_TOKEN'])]);
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
    expect(JSON.parse(vscode.text).inputs).toEqual([{ type: 'promptString', id: 'gatehouse-token', description: 'Gatehouse token', password: true }]);
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

  it('suggests a keychain account from the label', () => {
    expect(suggestAccount('Claude Desktop on Laptop!')).toBe('claude-desktop-on-laptop');
    expect(suggestAccount('***')).toBe('gatehouse');
  });
});
