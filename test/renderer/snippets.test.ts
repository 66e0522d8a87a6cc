import { describe, expect, it } from 'vitest';
import { SNIPPET_CLIENTS, shellQuote, snippetFor, suggestAccount } from '../../renderer/screens/tokens/snippets.ts';

const token = `gth_${'x'.repeat(43)}`;

describe('client snippets', () => {
  it('every JSON snippet is valid JSON that launches gatehouse-bridge', () => {
    for (const client of SNIPPET_CLIENTS.filter((c) => c !== 'claude-code')) {
      for (const keychainAccount of [undefined, 'my laptop']) {
        const parsed = JSON.parse(snippetFor(client, { token, keychainAccount }).text) as Record<string, Record<string, { command: string; args: string[] }>>;
        const server = (parsed.mcpServers ?? parsed.servers)!.gatehouse!;
        expect(server.command).toBe('gatehouse-bridge');
        expect(server.args).toEqual(keychainAccount ? ['--token-keychain', keychainAccount] : ['--token-env', 'GATEHOUSE_TOKEN']);
      }
    }
  });

  it('keeps the token out of configs that use the keychain, and out of VS Code configs altogether', () => {
    for (const client of SNIPPET_CLIENTS) {
      const withKeychain = snippetFor(client, { token, keychainAccount: 'acct' });
      expect(withKeychain.text).not.toContain(token);
      expect(withKeychain.containsToken).toBe(false);
    }
    const vscode = snippetFor('vscode', { token });
    expect(vscode.text).not.toContain(token);
    expect(vscode.text).toContain('${input:gatehouse-token}');
    expect(snippetFor('cursor', { token }).containsToken).toBe(true);
  });

  it('builds a claude mcp add command with safe shell quoting', () => {
    expect(snippetFor('claude-code', { token, keychainAccount: "bob's mac" }).text).toBe(
      "claude mcp add gatehouse -- gatehouse-bridge --token-keychain 'bob'\\''s mac'",
    );
    expect(snippetFor('claude-code', { token }).text).toBe(`claude mcp add gatehouse -e GATEHOUSE_TOKEN=${token} -- gatehouse-bridge --token-env GATEHOUSE_TOKEN`);
    expect(shellQuote('$(rm -rf ~)')).toBe("'$(rm -rf ~)'");
  });

  it('suggests a keychain account from the label', () => {
    expect(suggestAccount('Claude Desktop on Laptop!')).toBe('claude-desktop-on-laptop');
    expect(suggestAccount('***')).toBe('gatehouse');
  });
});
