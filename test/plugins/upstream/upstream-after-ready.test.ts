import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CLI_BUNDLE } from '../../../main/cli/build.ts';
import { silentLogger } from '../../../main/lib/logger.ts';
import { openLocalCore } from '../../../main/local-core.ts';
import { UpstreamConnection } from '../../../main/plugins/upstream/connection.ts';
import { definitionHash } from '../../../main/plugins/upstream/pinning.ts';
import { ensureCliBundle } from '../../bridge/helpers/bundle.ts';
import { filesWith, staticImports } from '../../helpers/bundle-graph.ts';
import { TEST_UPSTREAM } from './upstream-world.ts';

/**
 * `serve` is ready without its upstreams: they connect once the service
 * listens (docs/upstreams.md, "Connections"), and the MCP SDKs (client and
 * server, most of the bytes) are not on the way to ready at all.
 */
afterEach(() => vi.restoreAllMocks());

describe('upstreams are not on the path to ready', () => {
  it('a configured upstream offers its pinned tools from the start, and starts connecting only once the service says it is ready (startUpstreams)', async () => {
    const lookup = { name: 'lookup', description: 'Looks a word up.', inputSchema: { type: 'object' as const } };
    const dataDir = await mkdtemp(join(tmpdir(), 'gh-after-ready-'));
    await writeFile(
      join(dataDir, 'upstreams.json'),
      JSON.stringify({
        version: 1,
        upstreams: [
          {
            id: 'later',
            enabled: true,
            created: new Date().toISOString(),
            transport: { kind: 'stdio', command: process.execPath, args: [TEST_UPSTREAM], env_names: [] },
            secrets_account: null,
            timeout_ms: 60_000,
            era: null,
            tools: [
              {
                name: 'lookup',
                approved: { hash: definitionHash(lookup), definition: lookup },
                pending: null,
                hidden: false,
                marked: 'read',
                removed: false,
              },
            ],
            prompts: [],
          },
        ],
      }),
    );
    const starts = vi.spyOn(UpstreamConnection.prototype, 'start').mockImplementation(() => undefined);
    const core = await openLocalCore({ dataDir, vault: 'file', log: silentLogger, owner: 'service' });
    try {
      expect(core.registry.listPlugins().map((p) => p.id)).toContain('later');
      expect(starts).not.toHaveBeenCalled();
      // its pinned tools are offered from the start (recovery at start asks the registry for them)
      expect(core.registry.has('later__lookup')).toBe(true);
      core.startUpstreams();
      expect(starts).toHaveBeenCalledTimes(1);
      core.startUpstreams();
      expect(starts).toHaveBeenCalledTimes(1);
    } finally {
      await core.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("the serve command's bundle reaches ready without importing the MCP client or server SDK", async () => {
    await ensureCliBundle();
    // Everything the serve command imports statically, from the entry on (dynamic imports are loaded later).
    const entry = readFileSync(CLI_BUNDLE, 'utf8');
    const serveChunk = /import\("(\.\/chunks\/serve-command-[^"]+\.mjs)"\)/.exec(entry)?.[1];
    expect(serveChunk, 'the entry imports the serve command lazily').toBeTruthy();
    const graph = staticImports(CLI_BUNDLE, join(dirname(CLI_BUNDLE), serveChunk!));
    expect(graph.size).toBeGreaterThan(2);
    expect(filesWith(graph, /^\/\/ \S*@modelcontextprotocol\/(client|server)\//m)).toEqual([]);
  });
});
