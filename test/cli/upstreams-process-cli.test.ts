import { describe, expect, it } from 'vitest';
import type { UpstreamDetail } from '../../main/contract/upstreams.ts';
import { cliJson, dirArgs, runCli, sharedDataDir } from './cli-harness.ts';
import { REPO, TEST_UPSTREAM } from '../plugins/upstream/upstream-world.ts';

/** `gatehouse upstreams add --per-client` and `upstreams process` on the data dir, as a person types them. */
const data = sharedDataDir();
const MEMORY = `${REPO}node_modules/@modelcontextprotocol/server-memory/dist/index.js`;

describe('gatehouse upstreams: one process per client', () => {
  it('add --stdio --per-client stores it with its bounds and prints them', async () => {
    const r = await runCli([
      'upstreams',
      'add',
      'notes',
      '--stdio',
      '--per-client',
      '--max-processes',
      '3',
      '--idle-minutes',
      '5',
      '--unconfined',
      ...dirArgs(data.dir),
      '--',
      process.execPath,
      TEST_UPSTREAM,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      'processes: one per client token, at most 3 at once, each stopped after 5 min without a call; 0 running',
    );
    const d = await cliJson<UpstreamDetail>(data.dir, ['upstreams', 'show', 'notes']);
    expect(d.process).toMatchObject({ mode: 'per-client', max: 3, idle_ms: 300_000 });
  });

  it('process ID --shared and --per-client change it; a known stateful server sharing one is suggested it', async () => {
    const shared = await runCli(['upstreams', 'process', 'notes', '--shared', ...dirArgs(data.dir)]);
    expect(shared.code, shared.stderr).toBe(0);
    expect(shared.stdout).toContain('processes: one, shared by every client');

    const mem = await runCli([
      'upstreams',
      'add',
      'mem',
      '--stdio',
      '--unconfined',
      ...dirArgs(data.dir),
      '--',
      process.execPath,
      MEMORY,
    ]);
    expect(mem.code, mem.stderr).toBe(0);
    expect(mem.stdout).toContain(
      'suggested: it keeps a knowledge graph: every agent would read and write the same one; give it one process per client (process: "per-client"): gatehouse upstreams process mem --per-client',
    );
    const per = await cliJson<UpstreamDetail>(data.dir, ['upstreams', 'process', 'mem', '--per-client']);
    expect(per.process).toMatchObject({ mode: 'per-client', max: 8, idle_ms: 900_000, suggestion: null });
  });

  it('refuses what does not fit, before anything runs', async () => {
    const zero = await runCli([
      'upstreams',
      'process',
      'mem',
      '--per-client',
      '--max-processes',
      '0',
      ...dirArgs(data.dir),
    ]);
    expect(zero.code).not.toBe(0);
    expect(zero.stderr).toContain('--max-processes takes a whole number above 0 (got "0")');
    const neither = await runCli(['upstreams', 'process', 'mem', ...dirArgs(data.dir)]);
    expect(neither.stderr).toContain('upstreams process ID needs --per-client or --shared');
    const http = await runCli([
      'upstreams',
      'add',
      'web',
      '--url',
      'http://127.0.0.1:9/mcp',
      '--per-client',
      ...dirArgs(data.dir),
    ]);
    expect(http.stderr).toContain('--per-client and --shared are for --stdio upstreams');
  });
});
