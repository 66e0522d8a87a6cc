import { describe, expect, it } from 'vitest';
import { ROLE_CAPABILITIES, type Capability } from '../../../main/contract/users.ts';
import type { TokenScope } from '../../../main/contract/tokens.ts';
import type { ProfileSet } from '../../../main/core/calls/registry.ts';
import { mayUseUpstream, remoteUrlKey } from '../../../main/core/calls/upstream-access.ts';

/** The rule `gatehouse-bridge --remote` is answered by: whether a token may use an upstream at all, and which URLs are the same remote. */
const viewer = (role: keyof typeof ROLE_CAPABILITIES, scope: TokenScope | null = null) => ({
  capabilities: new Set<Capability>(ROLE_CAPABILITIES[role]),
  scope,
});
const profiles: Record<string, ProfileSet> = {
  notes: { tools: [], upstreams: ['notes'] },
  'one-tool': { tools: ['notes__read'], upstreams: [] },
  site: { tools: ['pages_list'], upstreams: [] },
};
// as Profiles.get looks a name up: own entries only
const profileOf = (name: string) => (Object.hasOwn(profiles, name) ? profiles[name] : undefined);

describe('mayUseUpstream', () => {
  it('needs use_upstreams: an editor or administrator, not an author', () => {
    expect(mayUseUpstream(viewer('administrator'), 'notes', profileOf)).toBe(true);
    expect(mayUseUpstream(viewer('editor'), 'notes', profileOf)).toBe(true);
    expect(mayUseUpstream(viewer('author'), 'notes', profileOf)).toBe(false);
  });

  it("follows the token's scope and profile, asked of the upstream rather than of tools it lists now", () => {
    const scoped = (scope: Partial<TokenScope>) =>
      mayUseUpstream(viewer('editor', { read_only: false, ...scope }), 'notes', profileOf);
    expect(scoped({ read_only: true })).toBe(true);
    expect(scoped({ plugins: ['notes'] })).toBe(true);
    expect(scoped({ plugins: ['site'] })).toBe(false);
    expect(scoped({ tools: ['notes__read'] })).toBe(true);
    // a prefix of another id is not this upstream
    expect(scoped({ tools: ['notes-old__read', 'pages_list'] })).toBe(false);
    expect(scoped({ profile: 'notes' })).toBe(true);
    expect(scoped({ profile: 'one-tool' })).toBe(true);
    expect(scoped({ profile: 'site' })).toBe(false);
    // a profile that no longer exists leaves nothing
    expect(scoped({ profile: 'gone' })).toBe(false);
    expect(scoped({ profile: '__proto__' })).toBe(false);
  });
});

describe('remoteUrlKey', () => {
  it('one spelling for the same remote; different remotes stay different', () => {
    const key = remoteUrlKey('https://mcp.example.com/mcp');
    for (const same of [
      'HTTPS://MCP.Example.com/mcp',
      'https://mcp.example.com:443/mcp',
      'https://mcp.example.com/mcp/',
      'https://mcp.example.com/mcp#x',
    ])
      expect(remoteUrlKey(same)).toBe(key);
    for (const other of [
      'http://mcp.example.com/mcp',
      'https://mcp.example.com/MCP',
      'https://mcp.example.com/mcp?tenant=a',
      'https://mcp.example.com:8443/mcp',
    ])
      expect(remoteUrlKey(other)).not.toBe(key);
    expect(remoteUrlKey('https://mcp.example.com/')).toBe('https://mcp.example.com/');
  });

  it('is null for what is not an http(s) URL', () => {
    for (const bad of ['javascript:alert(1)', 'file:///etc/passwd', 'not a url', '', 'ftp://x/y'])
      expect(remoteUrlKey(bad)).toBeNull();
  });
});
