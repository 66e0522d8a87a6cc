import { describe, expect, it } from 'vitest';
import type { UpstreamView } from '../../main/contract/upstreams.ts';
import { confinementLines, plannedSandboxLines } from '../../main/cli/upstream-sandbox-text.ts';

/** The sandbox lines of a consent step: `upstreams add`/`show` (the stored view) and `clients import` (the plan), alike. */
const view = (confinement: UpstreamView['confinement']) => ({ confinement }) as UpstreamView;

describe('the sandbox at consent', () => {
  it('upstreams add: the state, each file grant with its origin, the network, the runner', () => {
    expect(
      confinementLines(
        view({
          state: 'confined',
          backend: 'bubblewrap',
          why: 'confined by bubblewrap 0.8.0',
          fix: null,
          grants: [
            { kind: 'write', value: '~/notes', from: 'command_line' },
            { kind: 'net', value: 'api.github.com', from: 'person' },
            { kind: 'net', value: 'registry.npmjs.org', from: 'runner' },
          ],
          runner: { name: 'npx', registry: 'registry.npmjs.org' },
          private_home: '/data/sandbox/fs/home',
          person_unconfined: false,
        }),
      ),
    ).toEqual([
      '  sandbox: confined (bubblewrap): confined by bubblewrap 0.8.0',
      '    files: its runtime and package (read-only), its own HOME /data/sandbox/fs/home and temp',
      '      read-write ~/notes  (from the command line)',
      '    network: only through Gatehouse, to:',
      '      api.github.com',
      '    package runner: npx (its own cache in its HOME), may reach registry.npmjs.org to fetch the package',
    ]);
  });

  it('clients import: the same lines for what would be stored, one level deeper; unconfined said so', () => {
    expect(
      plannedSandboxLines('npx', ['-y', '@modelcontextprotocol/server-filesystem', '~/notes'], undefined, '    '),
    ).toEqual([
      '    sandbox: confined (where this machine cannot confine, it stays down and says why)',
      '      files: its runtime and package (read-only), its own HOME and temp',
      '        read-write ~/notes  (from the command line)',
      '      network: none of its own',
      '      package runner: npx (its own cache in its HOME), may reach registry.npmjs.org to fetch the package',
    ]);
    expect(plannedSandboxLines('node', ['/srv/s.js'], { read: ['/srv/data'], suggest: false }, '  ')).toEqual([
      '  sandbox: confined (where this machine cannot confine, it stays down and says why)',
      '    files: its runtime and package (read-only), its own HOME and temp',
      '      read-only /srv/data',
      '    network: none',
    ]);
    expect(plannedSandboxLines('node', ['/srv/s.js'], { unconfined: true }, '  ')).toEqual([
      '  sandbox: UNCONFINED (you asked for it): it will have all of your rights, files and network',
    ]);
  });
});
