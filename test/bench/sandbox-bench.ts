/**
 * What the OS sandbox costs a stdio upstream: server-filesystem on a temporary
 * folder, started unconfined and confined by bubblewrap (the same launcher
 * the service uses, sandbox/confinement.ts), sessions interleaved one by one,
 * with the SDK client over stdio.
 *
 * Figures: start (spawn to the first tools/list answer) p50/p99 and the added
 * p50 (goal: at most +50 ms), and list_directory p50/p99 (goal: no measurable
 * change, within 3 %).
 *
 * Run: npx tsx test/bench/sandbox-bench.ts   (BENCH_SESSIONS, BENCH_CALLS to scale)
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Confinement } from '../../main/plugins/upstream/sandbox/confinement.ts';
import { FILESYSTEM } from '../plugins/upstream/upstream-world.ts';
import { printTable, summarize } from './stats.ts';

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 25);
const CALLS = Number(process.env.BENCH_CALLS ?? 10);

const root = await mkdtemp(join(tmpdir(), 'gh-sandbox-bench-'));
const folder = join(root, 'folder');
await import('node:fs/promises').then((fs) => fs.mkdir(folder));
for (let i = 0; i < 20; i++) await writeFile(join(folder, `f${i}.txt`), 'x');
const confinement = new Confinement({ dataDir: join(root, 'data'), note: () => undefined });
await confinement.ready();
const transport = (confined: boolean) => ({
  kind: 'stdio' as const,
  command: process.execPath,
  args: [FILESYSTEM, folder],
  env_names: [],
  sandbox: { unconfined: !confined, grants: [{ kind: 'write' as const, value: folder, from: 'person' as const }] },
});

const starts: Record<string, number[]> = { unconfined: [], bwrap: [] };
const calls: Record<string, number[]> = { unconfined: [], bwrap: [] };

for (let s = 0; s < SESSIONS; s++)
  for (const mode of s % 2 ? ['bwrap', 'unconfined'] : ['unconfined', 'bwrap']) {
    const t = transport(mode === 'bwrap');
    const started = performance.now();
    const launch = await confinement.launcherFor('bench', t).launch(t.command, t.args, {});
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: launch.command,
        args: launch.args,
        env: launch.env,
        stderr: 'ignore',
        ...(launch.cwd ? { cwd: launch.cwd } : {}),
      }),
    );
    await client.listTools();
    starts[mode]!.push(performance.now() - started);
    for (let c = 0; c < CALLS; c++) {
      const t0 = performance.now();
      await client.callTool({ name: 'list_directory', arguments: { path: folder } });
      calls[mode]!.push(performance.now() - t0);
    }
    await client.close();
    await launch.close();
  }

const st = { u: summarize(starts.unconfined!), b: summarize(starts.bwrap!) };
const ca = { u: summarize(calls.unconfined!), b: summarize(calls.bwrap!) };
printTable(
  `server-filesystem, ${SESSIONS} sessions per mode interleaved, ${CALLS} list_directory calls each`,
  ['mode', 'start p50 ms', 'start p99 ms', 'added start p50', 'call p50 ms', 'call p99 ms'],
  [
    ['unconfined', st.u.p50.toFixed(1), st.u.p99.toFixed(1), '-', ca.u.p50.toFixed(2), ca.u.p99.toFixed(2)],
    [
      'bubblewrap',
      st.b.p50.toFixed(1),
      st.b.p99.toFixed(1),
      `${(st.b.p50 - st.u.p50).toFixed(1)} ms (goal <= 50)`,
      `${ca.b.p50.toFixed(2)} (${(((ca.b.p50 - ca.u.p50) / ca.u.p50) * 100).toFixed(1)} %, goal <= 3)`,
      ca.b.p99.toFixed(2),
    ],
  ],
);
await rm(root, { recursive: true, force: true });
