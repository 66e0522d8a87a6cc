import { describe, expect, it } from 'vitest';
import { mergeGrants, runnerOf, sandboxOf, suggestedGrants } from '../../main/contract/sandbox-grants.ts';

describe('grants suggested from the command line', () => {
  it("server-filesystem's folders (through npx or its script) and a --repository path", () => {
    expect(
      suggestedGrants('npx', ['-y', '@modelcontextprotocol/server-filesystem', '~/notes', '/srv/data', 'rel']),
    ).toEqual([
      { kind: 'write', value: '~/notes', from: 'command_line' },
      { kind: 'write', value: '/srv/data', from: 'command_line' },
      { kind: 'net', value: 'registry.npmjs.org', from: 'runner' },
    ]);
    expect(
      suggestedGrants('node', ['/x/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js', '/d']),
    ).toEqual([{ kind: 'write', value: '/d', from: 'command_line' }]);
    expect(suggestedGrants('uvx', ['mcp-server-git', '--repository', '~/src/app'])).toEqual([
      { kind: 'write', value: '~/src/app', from: 'command_line' },
      { kind: 'net', value: 'pypi.org', from: 'runner' },
      { kind: 'net', value: 'files.pythonhosted.org', from: 'runner' },
    ]);
    expect(suggestedGrants('node', ['/srv/server.js', '/etc/passwd'])).toEqual([]);
  });

  it('knows the package runners and their registries', () => {
    expect(runnerOf('/usr/bin/npx', [])).toMatchObject({ name: 'npx', registry: 'registry.npmjs.org' });
    expect(runnerOf('npm', ['exec', 'x'])).toMatchObject({ name: 'npm exec' });
    expect(runnerOf('uv', ['tool', 'run', 'x'])).toMatchObject({ registry: 'pypi.org' });
    expect(runnerOf('node', ['x'])).toBeNull();
  });

  it("merges a person's grants first, once each; --no-suggest leaves only theirs; unconfined only when asked", () => {
    expect(
      mergeGrants(
        { read: [], write: ['~/notes'], net: ['API.github.com'] },
        suggestedGrants('npx', ['@modelcontextprotocol/server-filesystem', '~/notes']),
      ),
    ).toEqual([
      { kind: 'write', value: '~/notes', from: 'person' },
      { kind: 'net', value: 'api.github.com', from: 'person' },
      { kind: 'net', value: 'registry.npmjs.org', from: 'runner' },
    ]);
    expect(
      sandboxOf('npx', ['@modelcontextprotocol/server-filesystem', '/d'], { suggest: false, write: ['/e'] }),
    ).toEqual({
      unconfined: false,
      grants: [{ kind: 'write', value: '/e', from: 'person' }],
    });
    expect(sandboxOf('node', [], undefined).unconfined).toBe(false);
  });
});
